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
import { errText, finish, report, runFlow, settings } from './flow.mjs';

const PINNED = '2026-07-28';
const { url, headers, tool, timeout } = settings();
const client = new Client(
  { name: 'deskhand-interop-v2', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: PINNED } } },
);
const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
client.onerror = () => {}; // transport errors surface through the awaited calls

try {
  await client.connect(transport, { timeout });
  const version = client.getNegotiatedProtocolVersion();
  report('connect', version === PINNED && !transport.sessionId, {
    protocolVersion: version,
    session: transport.sessionId ? 'present (unexpected on 2026-07-28)' : 'none',
    server: client.getServerVersion(),
  });
} catch (e) {
  report('connect', false, errText(e));
  finish();
}

await runFlow({
  tool,
  listTools: () => client.listTools(undefined, { timeout }),
  call: (args) => client.callTool({ name: tool, arguments: args }, { timeout }),
  sessionContinues: false,
});

try {
  await client.close();
  report('close', true, { session: 'none' });
} catch (e) {
  report('close', false, errText(e));
}
finish();
