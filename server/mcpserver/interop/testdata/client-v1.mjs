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
import { checkTokenRequired, errText, finish, report, runFlow, settings } from './flow.mjs';

const { url, headers, otherHeaders, tool, timeout } = settings();
function newClient() {
  const c = new Client({ name: 'deskhand-interop-v1', version: '1.0.0' });
  c.onerror = () => {}; // transport errors surface through the awaited calls
  return c;
}
const client = newClient();
const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });

try {
  await client.connect(transport, { timeout });
  const version = transport.protocolVersion;
  const ok = typeof version === 'string' && version < '2026' && Boolean(transport.sessionId);
  report('connect', ok, {
    protocolVersion: version,
    session: transport.sessionId ? 'present' : 'none',
    server: client.getServerVersion(),
  });
} catch (e) {
  report('connect', false, errText(e));
  finish();
}

if (headers.Authorization) {
  await checkTokenRequired(async () => {
    const bare = newClient();
    await bare.connect(new StreamableHTTPClientTransport(url), { timeout });
    return () => bare.close();
  });
}

// A second client with another token, for the foreign-handle check.
let other;
if (otherHeaders) {
  other = newClient();
  try {
    await other.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: otherHeaders } }), { timeout });
  } catch (e) {
    report('connect_other', false, errText(e));
    other = undefined;
  }
}

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
