// flow.mjs: the conversation checks shared by client-v1.mjs (SDK v1, legacy
// era) and client-v2.mjs (client v2, 2026-07-28). Each script connects its
// own SDK client, then hands it to runFlow.
//
// Environment:
//   DESKHAND_MCP_URL      the endpoint, e.g. http://127.0.0.1:7345/mcp (required)
//   DESKHAND_MCP_TOKEN    bearer token; empty sends no Authorization header
//   DESKHAND_MCP_OTHER_TOKEN  another client's token: adds the check that its
//                         calls cannot use the first client's conversation
//   DESKHAND_MCP_TOOL     tool to drive (default "assistant")
//   DESKHAND_TIMEOUT_MS   per-call timeout (default 60000)
//
// Checks, in order: connect (in each script), no_token_rejected (when a
// token is set), list_tools, ask_first, conversation_handle, ask_followup,
// followup_same_handle, session_continues (legacy only), foreign_handle
// (when another token is set), blank_handle, unknown_handle,
// elicitation_accept, elicitation_decline, close (in each script).
//
// The elicitation checks send "ask: What is your name?", which makes the
// fake Ollama's model call ask_user; Deskhand asks the calling client by
// elicitation (an elicitation/create request on the legacy era, an
// InputRequiredResult answered by a retry on 2026-07-28). Each script
// declares the elicitation capability on its main client and routes
// elicitation/create to answerElicitation.
//
// Output: one JSON line per check {check, ok, detail}, then "N passed, M failed".

import { randomUUID } from 'node:crypto';

export const META_KEY = 'io.deskhand/conversation';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function settings() {
  const env = process.env;
  const url = env.DESKHAND_MCP_URL;
  if (!url) {
    console.error('DESKHAND_MCP_URL is not set (e.g. http://127.0.0.1:7345/mcp)');
    process.exit(2);
  }
  const token = env.DESKHAND_MCP_TOKEN || '';
  const other = env.DESKHAND_MCP_OTHER_TOKEN || '';
  return {
    url: new URL(url),
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    otherHeaders: other ? { Authorization: `Bearer ${other}` } : undefined,
    tool: env.DESKHAND_MCP_TOOL || 'assistant',
    timeout: Number(env.DESKHAND_TIMEOUT_MS || 60000),
  };
}

// ---- elicitation ----
// What the main client's elicitation handler does (set per check), and every
// request it received.
const elicitation = { action: 'decline', value: undefined, requests: [] };

// answerElicitation is the main client's elicitation/create handler: it
// records the request, then accepts with {answer: value} or declines.
export async function answerElicitation(params) {
  elicitation.requests.push({
    message: params?.message,
    mode: params?.mode,
    properties: Object.keys(params?.requestedSchema?.properties || {}),
    action: elicitation.action,
  });
  if (elicitation.action === 'accept') return { action: 'accept', content: { answer: elicitation.value } };
  return { action: elicitation.action };
}

// ---- reporting ----
let passed = 0;
let failed = 0;

export function report(check, ok, detail) {
  ok ? passed++ : failed++;
  console.log(JSON.stringify({ check, ok: Boolean(ok), detail }));
}

export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

const clip = (s, n = 300) => (typeof s === 'string' && s.length > n ? `${s.slice(0, n)}…` : s);
export const errText = (e) => (e?.code !== undefined ? `JSON-RPC error ${e.code}: ${e.message}` : String(e?.message || e));

const texts = (res) => (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text);
const handleOf = (res) => res?._meta?.[META_KEY];
// The agent's words: every text block but the trailing handle block (a UUID
// could contain "ada", so the memory checks never look at it).
function replyOf(res) {
  const t = texts(res);
  const h = handleOf(res);
  if (t.length > 1 && typeof h === 'string' && t[t.length - 1].includes(h)) t.pop();
  return t.join('\n');
}
const lastText = (res) => texts(res).at(-1) ?? '';

// connectClients connects the main client (checked by connectCheck, which
// returns {ok, detail}), checks that a client without a token is refused
// with 401 when a token is set, and connects a second client with the other
// token for the foreign-handle check. newClient({elicitation}) builds a
// client, which declares elicitation and answers it with answerElicitation
// when elicitation is true (only the main client does); newTransport(headers)
// builds a transport; headers may be undefined.
export async function connectClients({ headers, otherHeaders, timeout, newClient, newTransport, connectCheck }) {
  const client = newClient({ elicitation: true });
  const transport = newTransport(headers);
  try {
    await client.connect(transport, { timeout });
    const { ok, detail } = connectCheck(client, transport);
    report('connect', ok, detail);
  } catch (e) {
    report('connect', false, errText(e));
    finish();
  }

  if (headers.Authorization) {
    const bare = newClient({ elicitation: false });
    try {
      await bare.connect(newTransport(undefined), { timeout });
      report('no_token_rejected', false, 'connected without a token');
      await bare.close();
    } catch (e) {
      const text = errText(e);
      report('no_token_rejected', /\b401\b/.test(text), { error: clip(text) });
    }
  }

  let other;
  if (otherHeaders) {
    other = newClient({ elicitation: false });
    try {
      await other.connect(newTransport(otherHeaders), { timeout });
    } catch (e) {
      report('connect_other', false, errText(e));
      other = undefined;
    }
  }
  return { client, transport, other };
}

// runFlow drives the tool. call(args) performs tools/call and resolves to the
// result; listTools() resolves to the tools/list result. sessionContinues adds
// the legacy-only check that a call without a handle continues the session's
// conversation. callOther, when set, calls as another client (token).
export async function runFlow({ tool, listTools, call, sessionContinues, callOther }) {
  // tools/list: the tool is there and "message" is required.
  try {
    const { tools } = await listTools();
    const t = tools.find((x) => x.name === tool);
    const props = Object.keys(t?.inputSchema?.properties || {});
    const required = t?.inputSchema?.required || [];
    report('list_tools', Boolean(t) && props.includes('message') && required.includes('message'), {
      tools: tools.map((x) => x.name),
      properties: props,
      required,
    });
  } catch (e) {
    report('list_tools', false, errText(e));
  }

  // First call: a new conversation, whose handle is a UUIDv4 in _meta and in
  // the last text block.
  let handle;
  try {
    const res = await call({ message: 'My name is Ada.' });
    report('ask_first', res.isError !== true && replyOf(res).length > 0, { isError: res.isError ?? false, reply: clip(replyOf(res)) });
    handle = handleOf(res);
    const isUUID = typeof handle === 'string' && UUID_V4.test(handle);
    report('conversation_handle', isUUID && lastText(res).includes(handle), {
      handle,
      uuidV4: isUUID,
      lastTextBlock: clip(lastText(res)),
      metaKeys: Object.keys(res?._meta || {}),
    });
  } catch (e) {
    report('ask_first', false, errText(e));
    report('conversation_handle', false, 'no result');
  }

  // Follow-up with the handle: the history reached the model.
  if (handle) {
    try {
      const res = await call({ message: 'What is my name?', conversation: handle });
      const reply = replyOf(res);
      report('ask_followup', res.isError !== true && reply.includes('Ada'), { isError: res.isError ?? false, reply: clip(reply) });
      report('followup_same_handle', handleOf(res) === handle, { sent: handle, returned: handleOf(res) });
    } catch (e) {
      report('ask_followup', false, errText(e));
      report('followup_same_handle', false, 'no result');
    }
  } else {
    report('ask_followup', false, 'skipped: no conversation handle');
    report('followup_same_handle', false, 'skipped: no conversation handle');
  }

  // Legacy era only: no handle in the same MCP session continues the
  // session's conversation.
  if (sessionContinues) {
    try {
      const res = await call({ message: 'What is my name?' });
      const reply = replyOf(res);
      report('session_continues', res.isError !== true && reply.includes('Ada') && handleOf(res) === handle, {
        isError: res.isError ?? false,
        reply: clip(reply),
        expectedHandle: handle,
        returned: handleOf(res),
      });
    } catch (e) {
      report('session_continues', false, errText(e));
    }
  }

  // Another client presenting the handle gets the unknown-handle error, and
  // learns nothing of the conversation.
  if (callOther) {
    try {
      const res = await callOther({ message: 'What is my name?', conversation: handle });
      const text = texts(res).join('\n');
      report('foreign_handle', Boolean(handle) && res.isError === true && text.includes('unknown conversation') && !text.includes('Ada'), {
        sent: handle,
        isError: res.isError ?? false,
        text: clip(text),
      });
    } catch (e) {
      report('foreign_handle', false, `expected a result with isError:true, got ${errText(e)}`);
    }
  }

  // A blank handle starts a new conversation.
  try {
    const res = await call({ message: 'What is my name?', conversation: '  ' });
    const reply = replyOf(res);
    const h = handleOf(res);
    const fresh = typeof h === 'string' && UUID_V4.test(h) && h !== handle;
    report('blank_handle', res.isError !== true && fresh && !reply.includes('Ada'), {
      isError: res.isError ?? false,
      handle: h,
      previous: handle,
      newHandle: fresh,
      reply: clip(reply),
    });
  } catch (e) {
    report('blank_handle', false, errText(e));
  }

  // An unknown handle is a tool error (isError), never a JSON-RPC error.
  try {
    const bogus = randomUUID();
    const res = await call({ message: 'Hello?', conversation: bogus });
    const text = texts(res).join('\n');
    report('unknown_handle', res.isError === true && text.includes('unknown conversation'), {
      sent: bogus,
      isError: res.isError ?? false,
      text: clip(text),
    });
  } catch (e) {
    report('unknown_handle', false, `expected a result with isError:true, got ${errText(e)}`);
  }

  // The agent asks the person: the client's handler answers once, and the
  // answer reaches the model (the fake answers "You answered: " + result).
  const question = 'What is your name?';
  const asked = (before) => {
    const got = elicitation.requests.slice(before);
    const one = got.length === 1 && got[0].message === question && got[0].properties.includes('answer');
    return { one, got };
  };
  {
    const value = `Grace-${randomUUID()}`;
    Object.assign(elicitation, { action: 'accept', value });
    const before = elicitation.requests.length;
    try {
      const res = await call({ message: `ask: ${question}` });
      const reply = replyOf(res);
      const { one, got } = asked(before);
      report('elicitation_accept', res.isError !== true && reply === `You answered: ${value}` && one, {
        isError: res.isError ?? false,
        reply: clip(reply),
        expected: `You answered: ${value}`,
        handlerCalls: got,
      });
    } catch (e) {
      report('elicitation_accept', false, { error: errText(e), handlerCalls: elicitation.requests.slice(before) });
    }
  }
  {
    Object.assign(elicitation, { action: 'decline', value: undefined });
    const before = elicitation.requests.length;
    try {
      const res = await call({ message: `ask: ${question}` });
      const reply = replyOf(res);
      const { one, got } = asked(before);
      report('elicitation_decline', res.isError !== true && reply.includes('declined') && one, {
        isError: res.isError ?? false,
        reply: clip(reply),
        handlerCalls: got,
      });
    } catch (e) {
      report('elicitation_decline', false, { error: errText(e), handlerCalls: elicitation.requests.slice(before) });
    }
  }
}
