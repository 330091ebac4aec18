#!/usr/bin/env node
// client-v2.mjs: Deskhand's "assistant" tool driven by the TypeScript client
// v2 (@modelcontextprotocol/client) pinned to protocol 2026-07-28
// (server/discover, sessionless) over Streamable HTTP.
//
//   DESKHAND_MCP_URL=http://127.0.0.1:PORT/mcp DESKHAND_MCP_TOKEN=TOKEN node client-v2.mjs
//
// See flow.mjs for the checks and the environment. Exit status 0 when every
// check passed, 1 otherwise, 2 on bad usage.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { answerElicitation, connectClients, errText, finish, report, runFlow, settings } from './flow.mjs';

const PINNED = '2026-07-28';
const { url, headers, otherHeaders, tool, timeout } = settings();
// The main client declares elicitation (form mode); on 2026-07-28 a question
// comes back as an InputRequiredResult, which the client's driver fulfils
// through this elicitation/create handler and retries with inputResponses
// and the echoed requestState.
function newClient({ elicitation }) {
  const options = { versionNegotiation: { mode: { pin: PINNED } } };
  if (elicitation) options.capabilities = { elicitation: { form: {} } };
  const c = new Client({ name: 'deskhand-interop-v2', version: '1.0.0' }, options);
  if (elicitation) c.setRequestHandler('elicitation/create', (req) => answerElicitation(req.params));
  c.onerror = () => {}; // transport errors surface through the awaited calls
  return c;
}
const { client, transport, other } = await connectClients({
  headers,
  otherHeaders,
  timeout,
  newClient,
  newTransport: (h) => new StreamableHTTPClientTransport(url, h ? { requestInit: { headers: h } } : undefined),
  connectCheck: (client, transport) => {
    const version = client.getNegotiatedProtocolVersion();
    return {
      ok: version === PINNED && !transport.sessionId,
      detail: {
        protocolVersion: version,
        session: transport.sessionId ? 'present (unexpected on 2026-07-28)' : 'none',
        server: client.getServerVersion(),
      },
    };
  },
});

await runFlow({
  tool,
  listTools: () => client.listTools(undefined, { timeout }),
  call: (args) => client.callTool({ name: tool, arguments: args }, { timeout }),
  sessionContinues: false,
  callOther: other && ((args) => other.callTool({ name: tool, arguments: args }, { timeout })),
});
await other?.close();

try {
  await client.close();
  report('close', true, { session: 'none' });
} catch (e) {
  report('close', false, errText(e));
}
finish();
