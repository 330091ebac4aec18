// Installs a Claude Desktop extension (.mcpb) and starts its server as
// Claude Desktop does, with the code Claude Desktop's own extension
// support is built on (@anthropic-ai/mcpb): the bundle is unpacked into a
// folder of its own (unpackExtension), the launch command is computed from
// its manifest with getMcpConfigForManifest (the extension's folder as
// ${__dirname}, the system folders, no user configuration, this system's
// path separator), and the command is spawned over stdio by the TypeScript
// MCP SDK's client. It lists the server's tools and prints, as one JSON
// line, the command it ran and the tools' names.
//
//	node mcpb-launch.mjs BUNDLE.mcpb FOLDER
//
// The server gets this process's environment (the test's fake HOME) with
// the manifest's env on top.
import { join, sep } from "node:path";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";

import { getMcpConfigForManifest, unpackExtension } from "@anthropic-ai/mcpb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bundle, folder] = process.argv.slice(2);
if (!bundle || !folder) {
  console.error("usage: node mcpb-launch.mjs BUNDLE.mcpb FOLDER");
  process.exit(2);
}
if (!(await unpackExtension({ mcpbPath: bundle, outputDir: folder, silent: true }))) {
  console.error(`cannot unpack ${bundle}`);
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8"));
const home = homedir();
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: folder,
  systemDirs: {
    HOME: home,
    DESKTOP: join(home, "Desktop"),
    DOCUMENTS: join(home, "Documents"),
    DOWNLOADS: join(home, "Downloads"),
  },
  userConfig: {},
  pathSeparator: sep,
});
if (!config) {
  console.error("the manifest gives no launch configuration");
  process.exit(1);
}

const transport = new StdioClientTransport({
  command: config.command,
  args: config.args ?? [],
  env: { ...process.env, ...(config.env ?? {}) },
  stderr: "inherit",
});
const client = new Client({ name: "claude-desktop-extension-check", version: "0.0.0" });
const timer = setTimeout(() => {
  console.error("no answer within 60 s");
  process.exit(1);
}, 60_000);
try {
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  console.log(JSON.stringify({ command: config.command, args: config.args ?? [], tools }));
} finally {
  clearTimeout(timer);
  await client.close();
}
