// Interop: @modelcontextprotocol/client 2.x against the real fixture server
// over stdio, once per legacy version it can offer through `initialize` and
// once pinned to the modern 2026-07-28 revision (server/discover, no handshake).

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, ProtocolError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  LEGACY_VERSIONS, MODERN_VERSION, TOOL_NAMES, assertServerRunnable, assertWireValid, negotiatedVersion,
  recordTransport, serverParams, textOf,
} from "./lib.mjs";

before(() => assertServerRunnable());

/** Connects a 2.x client; `options` are extra ClientOptions. */
async function connect(options) {
  const transport = new StdioClientTransport(serverParams());
  const log = recordTransport(transport);
  const client = new Client({ name: "mcplite-interop-client2", version: "2.0.0" }, { capabilities: {}, ...options });
  await client.connect(transport);
  return { client, log };
}

// Checks shared by every version: listing, calling, tool errors, stdout hygiene.
function commonTests(ctx, version) {
  test(`${version}: tools/list returns every tool in registration order`, async () => {
    const { tools } = await ctx.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
    const add = tools.find((t) => t.name === "add");
    assert.equal(add.inputSchema.type, "object");
    assert.deepEqual([...add.inputSchema.required].sort(), ["a", "b"]);
  });

  test(`${version}: tools/call add and echo return text`, async () => {
    const sum = await ctx.client.callTool({ name: "add", arguments: { a: 40, b: 2 } });
    assert.ok(!sum.isError, JSON.stringify(sum));
    assert.deepEqual(sum.content, [{ type: "text", text: "42" }]);
    const echo = await ctx.client.callTool({ name: "echo", arguments: { text: "ünïcødé ✓", times: 3 } });
    assert.equal(textOf(echo), "ünïcødé ✓ ünïcødé ✓ ünïcødé ✓");
  });

  test(`${version}: an R error becomes a tool error result`, async () => {
    const r = await ctx.client.callTool({ name: "fail", arguments: { reason: version } });
    assert.equal(r.isError, true);
    assert.match(textOf(r), new RegExp(`fixture failure: ${version}`));
  });

  test(`${version}: tool output on stdout never reaches the protocol stream`, async () => {
    const r = await ctx.client.callTool({ name: "noisy", arguments: {} });
    assert.equal(textOf(r), "quiet result");
    assert.deepEqual(ctx.log.errors.map(String), []);
  });

  test(`${version}: an unknown tool is a -32602 protocol error`, async () => {
    await assert.rejects(
      ctx.client.callTool({ name: "no_such_tool", arguments: {} }),
      (e) => e instanceof ProtocolError && e.code === -32602,
    );
  });
}

for (const version of LEGACY_VERSIONS) {
  describe(`client 2.x legacy offering ${version}`, () => {
    const ctx = {};
    before(async () => Object.assign(ctx, await connect({ supportedProtocolVersions: [version] })));
    after(async () => ctx.client && ctx.client.close());

    test(`${version}: initialize negotiates the offered version`, () => {
      assert.equal(ctx.client.getProtocolEra(), "legacy");
      assert.equal(ctx.client.getNegotiatedProtocolVersion(), version);
      assert.equal(negotiatedVersion(ctx.log), version);
      assert.equal(typeof ctx.client.getServerVersion().name, "string");
      assert.ok(ctx.client.getServerCapabilities().tools);
      // 2024-11-05 answers leave the instructions out, as CRAN mcplite does.
      assert.equal(
        ctx.client.getInstructions(),
        version === "2024-11-05" ? undefined : "Fixture server for mcplite interop tests."
      );
    });

    test(`${version}: ping answers an empty result`, async () => {
      assert.deepEqual(await ctx.client.ping(), {});
    });

    commonTests(ctx, version);

    test(`${version}: structured output is projected to the version`, async () => {
      const { tools } = await ctx.client.listTools();
      const summarise = tools.find((t) => t.name === "summarise");
      const r = await ctx.client.callTool({ name: "summarise", arguments: { values: [2, 4, 9] } });
      assert.ok(!r.isError, JSON.stringify(r));
      const expected = { n: 3, total: 15, mean: 5 };
      // The text fallback carries the data in every version.
      assert.deepEqual(JSON.parse(textOf(r)), expected);
      if (version === "2024-11-05") {
        assert.equal(summarise.outputSchema, undefined, "2024-11-05 has no outputSchema");
        assert.equal(r.structuredContent, undefined, "2024-11-05 has no structuredContent");
      } else {
        assert.equal(summarise.outputSchema.type, "object");
        assert.deepEqual(r.structuredContent, expected);
      }
    });

    test(`${version}: every response validates against the ${version} schema`, () => {
      const n = assertWireValid(ctx.log, version);
      assert.ok(n >= 8, `only ${n} responses were checked`);
    });
  });
}

describe(`client 2.x pinned to ${MODERN_VERSION}`, () => {
  const ctx = {};
  before(async () => Object.assign(ctx, await connect({ versionNegotiation: { mode: { pin: MODERN_VERSION } } })));
  after(async () => ctx.client && ctx.client.close());

  test(`${MODERN_VERSION}: connects through server/discover without initialize`, () => {
    assert.equal(ctx.client.getProtocolEra(), "modern");
    assert.equal(ctx.client.getNegotiatedProtocolVersion(), MODERN_VERSION);
    assert.equal(ctx.log.sent.filter((m) => m.method === "initialize").length, 0);
    const d = ctx.client.getDiscoverResult();
    assert.deepEqual(d.supportedVersions, ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]);
    assert.ok(d.capabilities.tools);
    assert.equal(d.ttlMs, 300000);
    assert.equal(d.cacheScope, "public");
    const info = ctx.client.getServerVersion();
    assert.ok(info && typeof info.name === "string", "serverInfo missing from discover _meta");
  });

  commonTests(ctx, MODERN_VERSION);

  test(`${MODERN_VERSION}: every request carries _meta and every result resultType complete`, async () => {
    const r = await ctx.client.callTool({ name: "summarise", arguments: { values: [1, 2] } });
    assert.deepEqual(r.structuredContent, { n: 2, total: 3, mean: 1.5 });
    for (const m of ctx.log.sent.filter((m) => "id" in m)) {
      assert.equal(m.params._meta["io.modelcontextprotocol/protocolVersion"], MODERN_VERSION, JSON.stringify(m));
    }
    const results = ctx.log.received.filter((m) => m.result);
    assert.ok(results.length > 0);
    for (const m of results) {
      assert.equal(m.result.resultType, "complete", JSON.stringify(m));
      assert.equal(typeof m.result._meta["io.modelcontextprotocol/serverInfo"].name, "string", JSON.stringify(m));
    }
  });

  test(`${MODERN_VERSION}: ping is refused for the modern era`, async () => {
    // client 2.x refuses modern ping itself; the server's -32601 for it is
    // covered by the testthat protocol suite.
    const before = ctx.log.sent.length;
    await assert.rejects(ctx.client.ping());
    assert.equal(ctx.log.sent.length, before, "modern ping must not reach the wire");
  });

  test(`${MODERN_VERSION}: an explicit server/discover on the session validates`, async () => {
    const d = await ctx.client.discover();
    assert.deepEqual(d.supportedVersions, ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]);
    assert.equal(d.instructions, "Fixture server for mcplite interop tests.");
  });

  test(`${MODERN_VERSION}: every response validates against the ${MODERN_VERSION} schema`, () => {
    const n = assertWireValid(ctx.log, undefined);
    assert.ok(n >= 6, `only ${n} responses were checked`);
  });
});

describe("client 2.x in auto negotiation mode", () => {
  test("auto mode discovers the modern era and calls a tool", async () => {
    const { client, log } = await connect({ versionNegotiation: { mode: "auto" } });
    try {
      assert.equal(client.getProtocolEra(), "modern");
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN_VERSION);
      const r = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
      assert.equal(textOf(r), "3");
      assertWireValid(log, undefined);
    } finally {
      await client.close();
    }
  });
});
