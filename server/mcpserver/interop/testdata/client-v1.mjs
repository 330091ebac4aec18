#!/usr/bin/env node
// client-v1.mjs: Deskhand's "assistant" tool driven by the TypeScript SDK v1
// (@modelcontextprotocol/sdk, legacy era only: initialize handshake,
// 2025-11-25, Mcp-Session-Id) over Streamable HTTP.
//
//   DESKHAND_MCP_URL=http://127.0.0.1:PORT/mcp DESKHAND_MCP_TOKEN=TOKEN node client-v1.mjs
//
// See flow.mjs for the checks and the environment. Exit status 0 when every
// check passed, 1 otherwise, 2 on bad usage.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { answerElicitation, connectClients, errText, finish, report, runFlow, settings } from './flow.mjs';

const { url, headers, otherHeaders, tool, timeout } = settings();
// The main client declares elicitation (form mode) and answers the server's
// elicitation/create requests, which arrive on the tools/call stream.
function newClient({ elicitation }) {
  const options = elicitation ? { capabilities: { elicitation: { form: {} } } } : undefined;
  const c = new Client({ name: 'deskhand-interop-v1', version: '1.0.0' }, options);
  if (elicitation) c.setRequestHandler(ElicitRequestSchema, (req) => answerElicitation(req.params));
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
    const version = transport.protocolVersion;
    return {
      ok: typeof version === 'string' && version < '2026' && Boolean(transport.sessionId),
      detail: { protocolVersion: version, session: transport.sessionId ? 'present' : 'none', server: client.getServerVersion() },
    };
  },
});

await runFlow({
  tool,
  listTools: () => client.listTools(undefined, { timeout }),
  call: (args) => client.callTool({ name: tool, arguments: args }, undefined, { timeout }),
  sessionContinues: true,
  callOther: other && ((args) => other.callTool({ name: tool, arguments: args }, undefined, { timeout })),
});
await other?.close();

try {
  await transport.terminateSession(); // DELETE /mcp
  await client.close();
  report('close', true, { session: 'terminated' });
} catch (e) {
  report('close', false, errText(e));
}
finish();
