// Package interop holds the interoperability tests of Deskhand's MCP
// endpoint: they build the deskhand command, serve it against a fake Ollama,
// and drive it over Streamable HTTP with real third-party clients: the
// TypeScript SDK v1 (legacy era, sessions), the TypeScript client v2 pinned
// to protocol 2026-07-28 (sessionless), and the official MCP conformance
// suite.
//
// The clients are npm packages pinned in testdata/package.json and
// testdata/package-lock.json; the tests run "npm ci" into testdata when
// testdata/node_modules is missing or stale. Node is DESKHAND_NODE (a node
// binary; npm beside it when there is one), else the Node.js 22 that make
// node22 (part of make test) installs under .cache/node22, else node on
// PATH. They
// skip when node or npm is missing, and the conformance tests when node is
// older than 22 (all of these fail instead when the environment variable CI
// is "true"), and with -short.
//
//	go test -race -count=1 -v ./server/mcpserver/interop/
//
// The Node scripts in testdata also run by hand against any Deskhand:
//
//	cd server/mcpserver/interop/testdata && npm ci
//	DESKHAND_MCP_URL=http://127.0.0.1:7345/mcp DESKHAND_MCP_TOKEN=... node client-v1.mjs
//	DESKHAND_MCP_URL=http://127.0.0.1:7345/mcp DESKHAND_MCP_TOKEN=... node client-v2.mjs
package interop
