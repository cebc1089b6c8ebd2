// Shared pieces of the interop tests: how to launch the fixture server, and a
// wire recorder that schema-validates every response a real client received.

import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { createValidator } from "./validate.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// MCPLITE_FIXTURE_SERVER swaps in another script (debugging a server build).
export const SERVER_SCRIPT = process.env.MCPLITE_FIXTURE_SERVER || join(here, "..", "testthat", "fixtures", "server.R");
export const TOOL_NAMES = ["add", "echo", "summarise", "fail", "noisy"];
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2024-11-05"];
export const MODERN_VERSION = "2026-07-28";

const PV_KEY = "io.modelcontextprotocol/protocolVersion";
const RESULT_DEFS = {
  initialize: "InitializeResult",
  ping: "EmptyResult",
  "server/discover": "DiscoverResult",
  "tools/list": "ListToolsResult",
  "tools/call": "CallToolResult",
};

/**
 * Spawn parameters for the fixture server. The whole environment is passed on
 * because the SDKs otherwise keep only a short allow-list, which drops R_LIBS.
 */
export function serverParams() {
  return {
    command: process.env.MCPLITE_RSCRIPT || "Rscript",
    args: ["--vanilla", SERVER_SCRIPT],
    env: { ...process.env },
    stderr: "pipe",
  };
}

/** Fails early, with the reason, when Rscript cannot load mcplite. */
export function assertServerRunnable() {
  const probe = process.env.MCPLITE_FIXTURE_SERVER ? "library(mcplite)" : "stopifnot(is.function(mcplite::mcp_server))";
  const r = spawnSync(serverParams().command, ["--vanilla", "-e", probe], {
    env: process.env,
    encoding: "utf8",
  });
  if (r.error || r.status !== 0) {
    throw new Error(
      `cannot run the fixture server: Rscript could not load mcplite with mcp_server() (R_LIBS=${process.env.R_LIBS ?? ""}): ` +
        (r.error ? r.error.message : r.stderr),
    );
  }
}

/**
 * Records the traffic of a stdio client transport without changing its class
 * (client 2.x only clones the exact base class for its discovery probe).
 */
export function recordTransport(transport) {
  const log = { sent: [], received: [], errors: [], stderr: "" };
  const seen = new WeakSet();
  let onmessage;
  let onerror;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => onmessage,
    set: (f) => {
      onmessage = typeof f === "function"
        ? (m, ...rest) => {
            if (m && typeof m === "object" && !seen.has(m)) {
              seen.add(m);
              log.received.push(m);
            }
            return f(m, ...rest);
          }
        : f;
    },
  });
  Object.defineProperty(transport, "onerror", {
    configurable: true,
    get: () => onerror,
    set: (f) => {
      onerror = typeof f === "function"
        ? (e) => {
            log.errors.push(e);
            return f(e);
          }
        : f;
    },
  });
  const send = transport.send.bind(transport);
  transport.send = async (m, ...rest) => {
    log.sent.push(m);
    return send(m, ...rest);
  };
  if (transport.stderr) transport.stderr.on("data", (d) => (log.stderr += d.toString()));
  return log;
}

const validator = createValidator();

/**
 * Validates every response the client received against the schema of the
 * version it was answered in (legacy: the negotiated version; modern: the
 * version named in the request's _meta), with strict member checks.
 */
export function assertWireValid(log, legacyVersion) {
  assert.deepEqual(log.errors.map(String), [], "transport reported errors (non-protocol bytes on stdout?)");
  const requests = new Map();
  for (const m of log.sent) if (m && "id" in m && "method" in m) requests.set(m.id, m);
  let checked = 0;
  const problems = [];
  for (const m of log.received) {
    if (!("id" in m) || !("result" in m || "error" in m)) continue;
    const req = requests.get(m.id);
    assert.ok(req, `response to an unknown request id: ${JSON.stringify(m)}`);
    const modern = req.params && req.params._meta && req.params._meta[PV_KEY];
    const version = modern || legacyVersion;
    const def = "result" in m ? RESULT_DEFS[req.method] : undefined;
    const verdict = validator.validate({ version, def, message: m, strict: true });
    checked++;
    if (!verdict.ok) {
      problems.push(`${version} ${req.method}\n  -> ${JSON.stringify(req)}\n  <- ${JSON.stringify(m)}\n  ${verdict.errors.join("\n  ")}`);
    }
  }
  assert.equal(problems.length, 0, `schema violations:\n${problems.join("\n")}`);
  return checked;
}

export function textOf(result) {
  return (result.content || []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
}

/** protocolVersion from the recorded initialize response, if any. */
export function negotiatedVersion(log) {
  const init = log.sent.find((m) => m.method === "initialize");
  if (!init) return undefined;
  const resp = log.received.find((m) => m.id === init.id && m.result);
  return resp && resp.result.protocolVersion;
}
