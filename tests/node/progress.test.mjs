// Progress: the official TypeScript clients' `onprogress` receives a tool's
// mcp_progress() reports (in-process, every version, and relayed from a
// worker with workers = 1: sdk 1.x and client 2.x), each notification
// validates against the version's schema, none follows the answer, and
// `resetTimeoutOnProgress` keeps a long call alive that would time out
// without progress. Server: ../testthat/fixtures/progress-server.R.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Transport1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as Client2, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { StdioClientTransport as Transport2 } from "@modelcontextprotocol/client/stdio";
import { LEGACY_VERSIONS, MODERN_VERSION, assertServerRunnable, recordTransport, serverParams, textOf } from "./lib.mjs";
import { createValidator } from "./validate.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const PROGRESS_SERVER = join(here, "..", "testthat", "fixtures", "progress-server.R");
const validator = createValidator();
const scratch = mkdtempSync(join(tmpdir(), "mcplite-progress-"));
let barriers = 0;

// `workers`: the fixture's MCPLITE_TEST_WORKERS (tools on workers).
function params(workers) {
  const base = serverParams();
  const env = workers === undefined ? base.env : { ...base.env, MCPLITE_TEST_WORKERS: workers };
  return { ...base, env, args: ["--vanilla", PROGRESS_SERVER] };
}

async function connect1(workers) {
  const transport = new Transport1(params(workers));
  const log = recordTransport(transport);
  const client = new Client1({ name: "mcplite-progress-sdk1", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, log };
}

async function connect2(options, workers) {
  const transport = new Transport2(params(workers));
  const log = recordTransport(transport);
  const client = new Client2({ name: "mcplite-progress-client2", version: "2.0.0" }, { capabilities: {}, ...options });
  await client.connect(transport);
  return { client, log };
}

function callTool(ctx, sdk1, request, options) {
  return sdk1 ? ctx.client.callTool(request, undefined, options) : ctx.client.callTool(request, options);
}

/** The progress notifications the client received, and where its answers are. */
function progressOf(log) {
  return log.received.filter((m) => m.method === "notifications/progress");
}

function assertProgressValid(log, version) {
  const notes = progressOf(log);
  assert.ok(notes.length > 0, "no progress notification was received");
  for (const m of notes) {
    const verdict = validator.validate({ version, def: "ProgressNotification", message: m });
    assert.ok(verdict.ok, `${JSON.stringify(m)}: ${JSON.stringify(verdict.errors)}`);
    if (version === "2024-11-05") assert.ok(!("message" in m.params), "2024-11-05 has no message");
  }
}

// The call reports 1, waits for a barrier file the progress callback
// creates once it has seen 1, reports 2, waits for the callback to have seen
// 2, answers. (Client 2.x in the 2026-07-28 era drops a notification that
// arrives just before the answer, so the tool waits for it to be seen.)
function progressTests(ctx, version, sdk1, where = "") {
  test(`${version}${where}: onprogress receives increasing values while the tool runs, none after the answer`, async () => {
    const barrier = join(scratch, `b${barriers++}`);
    const done = join(scratch, `b${barriers++}`);
    const seen = [];
    const r = await callTool(ctx, sdk1, { name: "report_wait", arguments: { barrier, done } }, {
      onprogress: (p) => {
        seen.push(p);
        writeFileSync(p.progress === 1 ? barrier : done, "");
      },
    });
    assert.equal(textOf(r), "finished");
    assert.deepEqual(seen.map((p) => p.progress), [1, 2]);
    assert.deepEqual(seen.map((p) => p.total), [2, 2]);
    if (version !== "2024-11-05") assert.equal(seen[0].message, "started");
    // One more round trip: a notification after the answer would be here now.
    await ctx.client.listTools();
    const answerAt = ctx.log.received.findIndex((m) => "id" in m && m.result && textOf(m.result) === "finished");
    const notes = progressOf(ctx.log).map((m) => ctx.log.received.indexOf(m));
    assert.ok(notes.every((i) => i < answerAt), "a progress notification followed the answer");
    assertProgressValid(ctx.log, version);
  });
}

// Timeouts reset by progress, without asserting a duration. The tool
// reports step i and waits on barrier i; the test releases barrier i GAP ms
// after it has seen report i. The timeout is several gaps long and shorter
// than the whole call (STEPS gaps), so the call lives only because each
// report reset the clock. The control: the same tool without reports, its
// barriers released on a timer with the same gap, times out.
const STEPS = 8, GAP = 300, TIMEOUT = 1500;
async function timeoutResetTests(ctx, sdk1, isTimeout) {
  const dir = mkdtempSync(join(scratch, "steps-"));
  const release = (i) => setTimeout(() => writeFileSync(join(dir, String(i)), ""), GAP);
  const options = { timeout: TIMEOUT, resetTimeoutOnProgress: true, onprogress: (p) => release(p.progress) };
  const r = await callTool(ctx, sdk1, { name: "steps", arguments: { n: STEPS, dir, report: true } }, options);
  assert.equal(textOf(r), String(STEPS));

  const quiet = mkdtempSync(join(scratch, "quiet-"));
  let step = 0;
  const timer = setInterval(() => { if (step < STEPS) writeFileSync(join(quiet, String(++step)), ""); }, GAP);
  try {
    await assert.rejects(
      callTool(ctx, sdk1, { name: "steps", arguments: { n: STEPS, dir: quiet, report: false } }, { ...options, onprogress: () => {} }),
      isTimeout,
    );
  } finally {
    clearInterval(timer);
    // Let the abandoned call end (or its cancellation find it gone).
    for (let i = 1; i <= STEPS; i++) writeFileSync(join(quiet, String(i)), "");
  }
}

before(() => assertServerRunnable());
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("sdk 1.x (legacy 2025-11-25)", () => {
  const ctx = {};
  before(async () => Object.assign(ctx, await connect1()));
  after(async () => ctx.client && ctx.client.close());
  progressTests(ctx, "2025-11-25", true);

  test("sdk 1.x: resetTimeoutOnProgress keeps a reporting call alive; without progress it times out", async () => {
    await timeoutResetTests(ctx, true, (e) => e.code === -32001);
  });
});

for (const version of LEGACY_VERSIONS) {
  describe(`client 2.x legacy offering ${version}`, () => {
    const ctx = {};
    before(async () => Object.assign(ctx, await connect2({ supportedProtocolVersions: [version] })));
    after(async () => ctx.client && ctx.client.close());
    progressTests(ctx, version, false);
  });
}

describe(`client 2.x pinned to ${MODERN_VERSION}`, () => {
  const ctx = {};
  before(async () => Object.assign(ctx, await connect2({ versionNegotiation: { mode: { pin: MODERN_VERSION } } })));
  after(async () => ctx.client && ctx.client.close());
  progressTests(ctx, MODERN_VERSION, false);

  test(`${MODERN_VERSION}: resetTimeoutOnProgress keeps a reporting call alive; without progress it times out`, async () => {
    await timeoutResetTests(ctx, false, (e) => e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout);
  });
});

// On a worker (workers = 1): the same, relayed by the server.
describe("sdk 1.x (legacy 2025-11-25), tools on a worker", () => {
  const ctx = {};
  before(async () => Object.assign(ctx, await connect1("1")));
  after(async () => ctx.client && ctx.client.close());
  progressTests(ctx, "2025-11-25", true, " on a worker");
});

describe(`client 2.x pinned to ${MODERN_VERSION}, tools on a worker`, () => {
  const ctx = {};
  before(async () => Object.assign(ctx, await connect2({ versionNegotiation: { mode: { pin: MODERN_VERSION } } }, "1")));
  after(async () => ctx.client && ctx.client.close());
  progressTests(ctx, MODERN_VERSION, false, " on a worker");
});
