// Calls every tool of a stdio MCP server through Gemini CLI's own MCP client
// code (the bundled connectToMcpServer(), which wraps the transport in
// Gemini's McpComplianceTransport, and the SDK Client's callTool() as
// Gemini's McpCallableTool calls it), and prints one JSON object: per tool,
// {ok, text, structuredContent} or {ok: false, error}.
//
// usage: node gemini-call.mjs <command> [args...]
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const bundle = join(dirname(require.resolve("@google/gemini-cli/package.json")), "bundle");
const main = readFileSync(join(bundle, "gemini.js"), "utf8");
const chunks = [...main.matchAll(/import "\.\/(chunk-[A-Za-z0-9_-]+\.js)"/g)].map((m) => m[1]);
const core = chunks.find((c) => readFileSync(join(bundle, c), "utf8").includes("async function connectToMcpServer("));
if (!core) throw new Error("connectToMcpServer() not found in the Gemini CLI bundle");
const { connectToMcpServer } = await import(join(bundle, core));

const [command, ...args] = process.argv.slice(2);
const cliConfig = {
  isTrustedFolder: () => true,
  sanitizationConfig: { enableEnvironmentVariableRedaction: true, allowedEnvironmentVariables: [], blockedEnvironmentVariables: [] },
  emitMcpDiagnostic: () => {},
};
const workspace = { getDirectories: () => [process.cwd()], onDirectoriesChanged: () => () => {} };
const client = await connectToMcpServer("0.0.0", "probe", { command, args }, false, workspace, cliConfig);
const out = {};
for (const tool of (await client.listTools()).tools) {
  try {
    const r = await client.callTool({ name: tool.name, arguments: {} }, undefined, { timeout: 20000 });
    out[tool.name] = { ok: true, text: r.content?.[0]?.text ?? null, structuredContent: r.structuredContent ?? null };
  } catch (e) {
    out[tool.name] = { ok: false, error: String(e?.message ?? e) };
  }
}
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
