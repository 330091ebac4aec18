// Package clientcheck holds only tests: they prove what deskhand connect
// writes with the clients' own commands. The clients are the npm packages
// pinned in testdata/package.json and testdata/package-lock.json
// (@anthropic-ai/claude-code, @openai/codex, @google/gemini-cli,
// @qwen-code/qwen-code), installed
// by "npm ci" into testdata/node_modules when it is missing or was installed
// from another lock. The test builds deskhand, runs "deskhand serve" and
// "deskhand connect claude-code codex gemini qwen" in a fake HOME, then asks each
// client, in that HOME with no API key:
//
//   - claude mcp list: the deskhand line says Connected (its own health check);
//   - codex mcp get deskhand: the URL and an Authorization header;
//   - gemini mcp list, in a folder trusted in ~/.gemini/trustedFolders.json
//     as a user would trust it: the deskhand line says Connected;
//   - qwen mcp list: the deskhand line says Connected.
//
// and deskhand connect --status must agree. Then each client turns the
// entry off its own way (gemini's enablement file and folder trust, Codex's
// enabled switch, Claude Code's and Qwen Code's approval of a project's
// servers, qwen mcp approve and reject run for real, Claude Code's
// per-project switches), and --status must say what the client says.
//
// TestClaudeDesktopExtension proves the Claude Desktop extension the same
// way, with the format's own package (@anthropic-ai/mcpb, pinned beside
// the clients with @modelcontextprotocol/sdk): deskhand connect
// claude-desktop --extension writes the bundle of the built deskhand, mcpb
// validate checks its manifest, and testdata/mcpb-launch.mjs installs and
// starts it as Claude Desktop does (unpackExtension, getMcpConfigForManifest,
// the SDK's stdio client); the tools it lists must be the served app's
// agents, reached as the client claude-desktop (deskhand token list).
//
// Node is DESKHAND_NODE (a node
// binary; npm beside it when there is one), else the Node.js 22 that make
// node22 (part of make test) installs under .cache/node22, else node on
// PATH. The test skips when node or npm is missing or node is older than 22
// (it fails instead when the environment variable CI is "true"), and with
// -short.
//
//	go test -race -count=1 -v ./ui/connect/clientcheck/
package clientcheck
