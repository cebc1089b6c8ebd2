// Interop: @modelcontextprotocol/sdk 1.x (legacy initialize handshake) against
// the real fixture server over stdio.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  TOOL_NAMES, assertServerRunnable, assertWireValid, negotiatedVersion, recordTransport, serverParams, textOf,
} from "./lib.mjs";

let client;
let log;

before(async () => {
  assertServerRunnable();
  const transport = new StdioClientTransport(serverParams());
  log = recordTransport(transport);
  client = new Client({ name: "mcplite-interop-sdk1", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
});

after(async () => {
  if (client) await client.close();
});

test("sdk 1.x: initialize negotiates 2025-11-25 and reports tools capability", () => {
  assert.equal(negotiatedVersion(log), "2025-11-25");
  const info = client.getServerVersion();
  assert.equal(typeof info.name, "string");
  assert.equal(typeof info.version, "string");
  assert.ok(client.getServerCapabilities().tools, "tools capability missing");
  assert.equal(client.getInstructions(), "Fixture server for mcplite interop tests.");
});

test("sdk 1.x: ping answers an empty result", async () => {
  assert.deepEqual(await client.ping(), {});
});

test("sdk 1.x: tools/list returns the tools in registration order with schemas", async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
  const add = tools.find((t) => t.name === "add");
  assert.equal(add.description, "Add two numbers.");
  assert.equal(add.inputSchema.type, "object");
  assert.deepEqual(Object.keys(add.inputSchema.properties), ["a", "b"]);
  assert.deepEqual([...add.inputSchema.required].sort(), ["a", "b"]);
  const echo = tools.find((t) => t.name === "echo");
  assert.deepEqual(echo.inputSchema.required, ["text"]);
  const summarise = tools.find((t) => t.name === "summarise");
  assert.equal(summarise.outputSchema.type, "object");
  assert.deepEqual(Object.keys(summarise.outputSchema.properties).sort(), ["mean", "n", "total"]);
});

test("sdk 1.x: tools/call add returns the sum as text", async () => {
  const r = await client.callTool({ name: "add", arguments: { a: 2, b: 3.5 } });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.deepEqual(r.content, [{ type: "text", text: "5.5" }]);
});

test("sdk 1.x: tools/call echo round-trips unicode text and the optional argument", async () => {
  const r = await client.callTool({ name: "echo", arguments: { text: "héllo ✓ 日本", times: 2 } });
  assert.equal(textOf(r), "héllo ✓ 日本 héllo ✓ 日本");
  const once = await client.callTool({ name: "echo", arguments: { text: "once" } });
  assert.equal(textOf(once), "once");
});

test("sdk 1.x: structured content matches the output schema and the text fallback", async () => {
  // sdk 1.x validates structuredContent against the listed outputSchema itself.
  await client.listTools();
  const r = await client.callTool({ name: "summarise", arguments: { values: [1, 2, 3, 4] } });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.deepEqual(r.structuredContent, { n: 4, total: 10, mean: 2.5 });
  assert.deepEqual(JSON.parse(textOf(r)), r.structuredContent);
});

test("sdk 1.x: an R error becomes a tool error result", async () => {
  const r = await client.callTool({ name: "fail", arguments: { reason: "boom" } });
  assert.equal(r.isError, true);
  assert.match(textOf(r), /fixture failure: boom/);
});

test("sdk 1.x: output printed by a tool never reaches the protocol stream", async () => {
  const r = await client.callTool({ name: "noisy", arguments: {} });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(textOf(r), "quiet result");
  // The server keeps working afterwards.
  const again = await client.callTool({ name: "add", arguments: { a: 1, b: 1 } });
  assert.equal(textOf(again), "2");
  assert.deepEqual(log.errors.map(String), []);
});

test("sdk 1.x: many requests in flight at once are each answered", async () => {
  const calls = Array.from({ length: 20 }, (_, i) => client.callTool({ name: "add", arguments: { a: i, b: 1000 } }));
  const results = await Promise.all([...calls, client.listTools(), client.ping()]);
  results.slice(0, 20).forEach((r, i) => assert.equal(textOf(r), String(i + 1000)));
});

test("sdk 1.x: a large argument and result cross the pipe whole", async () => {
  const text = "é".repeat(300000); // 600 kB of UTF-8 in one line each way
  const r = await client.callTool({ name: "echo", arguments: { text } });
  assert.equal(textOf(r), text);
});

test("sdk 1.x: an unknown tool is a -32602 protocol error", async () => {
  await assert.rejects(
    client.callTool({ name: "no_such_tool", arguments: {} }),
    (e) => e instanceof McpError && e.code === -32602,
  );
});

test("sdk 1.x: every response on the wire validates against the 2025-11-25 schema", () => {
  const n = assertWireValid(log, negotiatedVersion(log));
  assert.ok(n >= 10, `only ${n} responses were checked`);
});

test("sdk 1.x: with tracing exported to stderr, stdout still carries only protocol", async () => {
  const params = serverParams();
  params.env = { ...params.env, OTEL_R_TRACES_EXPORTER: "stderr" };
  const transport = new StdioClientTransport(params);
  const traced = recordTransport(transport);
  const c = new Client({ name: "mcplite-interop-sdk1-otel", version: "1.0.0" }, { capabilities: {} });
  await c.connect(transport);
  const r = await c.callTool({ name: "noisy", arguments: {} });
  assert.equal(textOf(r), "quiet result");
  assert.equal(textOf(await c.callTool({ name: "add", arguments: { a: 1, b: 2 } })), "3");
  await c.close();
  await new Promise((res) => setTimeout(res, 200));
  assertWireValid(traced, negotiatedVersion(traced));
  // The spans went to stderr, one SERVER span named after the tool call.
  assert.match(traced.stderr, /"name":"tools\/call add"/);
});
