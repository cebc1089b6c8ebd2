#!/usr/bin/env node
// R-level fuzz driver for mcplite (issue 13): random JSON values as tool
// arguments (every arity, defaults, `...`, odd names) and random R objects as
// tool return values (tests/fuzz/fuzz-server.R), through a real server in R
// over real pipes. Every stdout line is checked; every request with an id must
// get exactly one answer; every answer is validated against the official
// schema of its protocol version.
//
//   node tests/fuzz/fuzz-r.mjs [--seed N] [--seconds 60] [--inputs N]
//        [--window 16] [--out DIR] [--rscript PATH] [--server PATH]
//   node tests/fuzz/fuzz-r.mjs --replay FILE     (a file a failed run wrote)
//
// The seed is printed first; the same seed sends the same requests (answers
// may interleave differently, the inputs do not). On a violation the requests
// sent to the server that misbehaved are written to DIR for --replay. Exit
// status 1 when anything was violated. Needs Rscript with mcplite on R_LIBS
// and tests/node/node_modules (ajv) for the schemas.

import { spawn } from "node:child_process";
import { writeFileSync, readFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";

const here = dirname(fileURLToPath(import.meta.url));
const { createValidator } = await import(join(here, "..", "node", "validate.mjs"));

// ---- options ----------------------------------------------------------------
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};
const seedText = opt("seed", String(Date.now() % 4294967296));
const seconds = Number(opt("seconds", "60"));
const maxInputs = Number(opt("inputs", "Infinity"));
const windowSize = Number(opt("window", "16"));
const outDir = resolve(opt("out", join(tmpdir(), "mcplite-rfuzz")));
const rscript = opt("rscript", "Rscript");
const serverScript = resolve(opt("server", join(here, "fuzz-server.R")));
const replayFile = opt("replay", null);

// ---- deterministic random numbers (xoshiro128**) -------------------------------
function seedState(text) {
  let h = 2166136261 >>> 0;
  const st = [];
  for (let k = 0; k < 4; k++) {
    for (const c of `${text}:${k}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    st.push(h || 1);
  }
  return st;
}
const S = seedState(seedText);
function next32() {
  const r = Math.imul(((Math.imul(S[1], 5) << 7) | (Math.imul(S[1], 5) >>> 25)), 9) >>> 0;
  const t = S[1] << 9;
  S[2] ^= S[0]; S[3] ^= S[1]; S[1] ^= S[2]; S[0] ^= S[3]; S[2] ^= t;
  S[3] = (S[3] << 11) | (S[3] >>> 21);
  return r;
}
const rand = () => next32() / 4294967296;
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
const chance = (p) => rand() < p;

// ---- random JSON text -----------------------------------------------------------
const NUMBERS = ["0", "-0", "1", "-1", "2147483647", "2147483648", "-2147483647", "-2147483648", "-2147483649",
  "1.0", "1e400", "-1e400", "1e-400", "123456789012345678901234567890", "0.1", "1E2", "1e+2", "5e-324",
  "9007199254740993", "1.7976931348623157e308", "-0.0", "3.14159", "1e-7", "4294967296"];
const PIECES = ["a", "plain", "x y", "\u00e9t\u00e9", "\u65e5\u672c", "\u{1F600}", "\u202eRTL", "\\u0000", "\\ud800",
  "\\udc00", "\\ud83d\\ude00", "\\n", "\\t", "\\r", "\\\"", "\\\\", "\\/", "\\u2028", "\\u0001", "\\u001f", "\u007f",
  "\\uffff", "\\ufeff", "e\u0301", "{\\\"a\\\":1}", "1}\\n{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":99,\\\"result\\\":{}}"];
function genString() {
  if (chance(0.02)) return `"${"x".repeat(int(20000))}"`;
  let s = "";
  const n = int(5);
  for (let i = 0; i < n; i++) s += pick(PIECES);
  return `"${s}"`;
}
const KEYS = ['"x"', '"y"', '"z"', '"a"', '""', '"..."', '"..1"', '"x\\u0000"', '"\\ud800"', '"\u00e9"', '"\u{1F600}"',
  '"a\\"b"', '"a\\\\b"', '"_meta"', '"type"', '"NULL"', '"if"', '"x y"', '"seed"'];
const genKey = () => (chance(0.7) ? pick(KEYS) : genString());
function nest(n, leaf) {
  const arr = chance(0.5);
  return (arr ? "[".repeat(n) : '{"a":'.repeat(n)) + leaf + (arr ? "]" : "}").repeat(n);
}
function genNumber() {
  if (chance(0.5)) return pick(NUMBERS);
  if (chance(0.5)) return String(int(2000001) - 1000000);
  return String((rand() - 0.5) * 10 ** int(30));
}
function genJson(depth = 0) {
  const r = rand();
  if (depth > 0 && chance(0.01)) return nest(pick([20, 100, 400, 513, 600, 2000]), genJson(99));
  if (depth >= 4 || r < 0.45) {
    const k = int(10);
    if (k < 4) return genNumber();
    if (k < 8) return genString();
    return pick(["true", "false", "null"]);
  }
  const n = int(5);
  const items = [];
  if (r < 0.72) {
    for (let i = 0; i < n; i++) items.push(genJson(depth + 1));
    return `[${items.join(",")}]`;
  }
  for (let i = 0; i < n; i++) items.push(`${genKey()}:${genJson(depth + 1)}`);
  return `{${items.join(",")}}`;
}

// ---- requests ---------------------------------------------------------------------
const FORMALS = { a0: [], a1: ["x"], a2: ["x", "y"], a3: ["x", "y", "z"], d1: ["x"], d2: ["x", "y"], d3: ["x", "y", "z"],
  v: [], v1: ["x"], v2: ["x", "y"], echo: ["x"] };
const ALL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"];
const LEGACY = ["2025-11-25", "2025-06-18", "2024-11-05"];

function metaFor(version) {
  return `"_meta":{"io.modelcontextprotocol/protocolVersion":"${version}","io.modelcontextprotocol/clientCapabilities":{}}`;
}

let idCounter = 0;
function newId() {
  idCounter += 1;
  return idCounter % 2 ? { json: String(idCounter), key: `n${idCounter}` } : { json: `"s${idCounter}"`, key: `s${idCounter}` };
}

const stats = { sessions: 0, sent: 0, calls: 0, rets: 0, other: 0, notifications: 0, answers: 0, toolErrors: 0,
  protocolErrors: 0, validated: 0, quits: 0, byVersion: {} };

// A tools/call of a tool whose one argument is a random seed (ret, ret_quit),
// with the version's _meta when the session is stateless.
function seedCallLine(id, meta, tool) {
  const inner = `"name":"${tool}","arguments":{"seed":${next32() >>> 1}}`;
  return `{"jsonrpc":"2.0","id":${id.json},"method":"tools/call","params":{${[inner, meta].filter(Boolean).join(",")}}}`;
}

// One input: { line, id?, kind, version, def }.
function genRequest(session) {
  const version = session.modern ? (chance(0.7) ? "2026-07-28" : pick(ALL_VERSIONS)) : session.version;
  const meta = session.modern ? metaFor(version) : null;
  const params = (inner) => `{${[inner, meta].filter(Boolean).join(",")}}`;
  const r = rand();
  if (r < 0.47) {
    const tool = pick(Object.keys(FORMALS));
    const pairs = [];
    for (const f of FORMALS[tool]) if (chance(0.75)) pairs.push(`"${f}":${genJson(1)}`);
    const extra = chance(0.25) ? 1 + int(2) : 0;
    for (let i = 0; i < extra; i++) pairs.push(`${genKey()}:${genJson(1)}`);
    if (chance(0.1)) pairs.sort(() => rand() - 0.5);
    const id = newId();
    stats.calls += 1;
    return { id, version, kind: "call", tool, def: "CallToolResult",
      line: `{"jsonrpc":"2.0","id":${id.json},"method":"tools/call","params":${params(`"name":"${tool}","arguments":{${pairs.join(",")}}`)}}` };
  }
  if (r < 0.94) {
    const id = newId();
    stats.rets += 1;
    return { id, version, kind: "ret", tool: "ret", def: "CallToolResult",
      line: seedCallLine(id, meta, "ret") };
  }
  stats.other += 1;
  const k = int(4);
  if (k === 0) {
    const id = newId();
    return { id, version, kind: "list", def: "ListToolsResult", line: `{"jsonrpc":"2.0","id":${id.json},"method":"tools/list","params":${params("")}}` };
  }
  if (k === 1) {
    const id = newId();
    return { id, version, kind: "unknown-tool", def: "CallToolResult",
      line: `{"jsonrpc":"2.0","id":${id.json},"method":"tools/call","params":${params(`"name":${genString()},"arguments":{}`)}}` };
  }
  stats.notifications += 1;
  return { version, kind: "notification",
    line: `{"jsonrpc":"2.0","method":${pick(['"notifications/initialized"', '"tools/call"', '"x"', genString()])},"params":${chance(0.5) ? genJson(1) : "{}"}}` };
}

// ---- violations -------------------------------------------------------------------
const violations = [];
const counts = {};
function violate(kind, detail, session) {
  counts[kind] = (counts[kind] || 0) + 1;
  if (counts[kind] <= 3) {
    const entry = { kind, detail: String(detail).slice(0, 600) };
    if (session) entry.replay = saveReplay(session, kind);
    violations.push(entry);
  }
}
function saveReplay(session, kind) {
  try {
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, `rfuzz-${seedText}-${session.n}-${kind.replace(/[^a-z0-9]+/gi, "-")}.jsonl`);
    const head = `# mcplite R-level fuzz, seed ${seedText}, server ${session.n}, ${session.modern ? "modern" : session.version}\n`;
    writeFileSync(file, head + session.sentLines.join("\n") + "\n");
    return file;
  } catch (e) {
    return `(could not write: ${e.message})`;
  }
}

// ---- the server -------------------------------------------------------------------
const validator = createValidator();
const decoder = new TextDecoder("utf-8", { fatal: true });

function startServer(n) {
  const modern = chance(0.4);
  const version = modern ? "2026-07-28" : pick(LEGACY);
  const child = spawn(rscript, ["--vanilla", serverScript], { stdio: ["pipe", "pipe", "pipe"] });
  const session = { n, child, modern, version, pending: new Map(), buf: Buffer.alloc(0), stderr: "", sentLines: [],
    exited: false, exitCode: null, closing: false, lastAnswer: Date.now(), ready: modern, initId: null };
  stats.sessions += 1;
  child.stdin.on("error", () => {});
  child.stderr.on("data", (d) => { session.stderr = (session.stderr + d.toString("utf8")).slice(-4000); });
  child.stdout.on("data", (d) => onStdout(session, d));
  child.on("exit", (code, signal) => {
    session.exited = true;
    session.exitCode = code === null ? `signal ${signal}` : code;
  });
  if (!modern) {
    session.initId = "init";
    send(session, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"${version}","capabilities":{},"clientInfo":{"name":"rfuzz","version":"1"}}}`);
    session.pending.set("init", { kind: "init", version, def: "InitializeResult", line: "initialize" });
  }
  return session;
}

function send(session, line) {
  session.sentLines.push(line);
  if (session.sentLines.length > 3000) session.sentLines.splice(1, 1000); // keep the initialize line
  stats.sent += 1;
  return session.child.stdin.write(line + "\n");
}

function onStdout(session, data) {
  session.buf = Buffer.concat([session.buf, data]);
  let nl;
  while ((nl = session.buf.indexOf(10)) >= 0) {
    const bytes = session.buf.subarray(0, nl);
    session.buf = session.buf.subarray(nl + 1);
    checkLine(session, bytes);
  }
}

function checkLine(session, bytes) {
  let text;
  try {
    text = decoder.decode(bytes);
  } catch {
    return violate("non-JSON stdout line", `invalid UTF-8: ${bytes.toString("latin1").slice(0, 300)}`, session);
  }
  if (text.includes("\r")) return violate("non-JSON stdout line", `carriage return: ${text.slice(0, 300)}`, session);
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    return violate("non-JSON stdout line", text.slice(0, 300), session);
  }
  if (!msg || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0" || (("result" in msg) === ("error" in msg))) {
    return violate("non-JSON stdout line", `not a JSON-RPC response: ${text.slice(0, 300)}`, session);
  }
  const key = typeof msg.id === "number" ? `n${msg.id}` : typeof msg.id === "string" ? (msg.id === "init" ? "init" : msg.id) : null;
  const req = key && session.pending.get(key);
  if (!req) {
    const dup = key && session.answered && session.answered.has(key);
    return violate(dup ? "duplicate answer" : "answer nobody asked for", text.slice(0, 300), session);
  }
  session.pending.delete(key);
  (session.answered ||= new Set()).add(key);
  if (session.answered.size > 5000) session.answered = new Set([...session.answered].slice(-2000));
  session.lastAnswer = Date.now();
  stats.answers += 1;
  stats.byVersion[req.version] = (stats.byVersion[req.version] || 0) + 1;
  if (req.kind === "init") {
    session.ready = true;
    send(session, '{"jsonrpc":"2.0","method":"notifications/initialized"}');
  }
  if (msg.error) {
    stats.protocolErrors += 1;
    const m = String(msg.error.message || "");
    if (msg.error.code === -32603) violate("internal error (-32603)", `${req.line.slice(0, 300)} -> ${text.slice(0, 300)}`, session);
    else if (/params must be an object/.test(m)) violate("lying error", `${req.line.slice(0, 300)} -> ${text.slice(0, 300)}`, session);
    else if ((req.kind === "call" || req.kind === "ret") && msg.error) {
      violate("protocol error for a call of a known tool", `${req.line.slice(0, 300)} -> ${text.slice(0, 300)}`, session);
    }
  } else if (msg.result && msg.result.isError) {
    stats.toolErrors += 1;
  }
  const verdict = validator.validate({ version: req.version, message: msg, def: msg.error ? undefined : req.def, strict: true });
  stats.validated += 1;
  if (!verdict.ok) violate("schema-invalid answer", `${req.version} ${verdict.errors.slice(0, 3).join("; ")}: ${text.slice(0, 300)}`, session);
}

// ---- the run ----------------------------------------------------------------------
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function finish(session, reason) {
  // Wait for what is in flight, close stdin, expect a clean exit.
  const deadline = Date.now() + 60000;
  while (session.pending.size && !session.exited && Date.now() < deadline) await sleep(5);
  session.closing = true;
  session.child.stdin.end();
  const exitBy = Date.now() + 15000;
  while (!session.exited && Date.now() < exitBy) await sleep(5);
  if (!session.exited) {
    violate("no exit after stdin closed", `${reason}; stderr: ${session.stderr.slice(-500)}`, session);
    session.child.kill("SIGKILL");
  } else if (session.exitCode !== 0) {
    violate("bad exit status", `${session.exitCode} (${reason}); stderr: ${session.stderr.slice(-500)}`, session);
  }
  for (const [, req] of session.pending) violate("lost answer", `${req.line.slice(0, 300)}`, session);
  session.pending.clear();
}

async function fuzz() {
  console.log(`mcplite R-level fuzz: seed ${seedText}, ${seconds} s budget${Number.isFinite(maxInputs) ? `, at most ${maxInputs} inputs` : ""}`);
  const t0 = Date.now();
  const end = t0 + seconds * 1000;
  let inputs = 0;
  let n = 1;
  let session = startServer(n);
  while (Date.now() < end && inputs < maxInputs) {
    if (session.quitting) {
      // A result whose conversion called quit(): the call is answered, then
      // the server ends with quit()'s status.
      if (!session.exited && Date.now() - session.quitting < 30000) {
        await sleep(2);
        continue;
      }
      if (!session.exited) {
        violate("stall", `no exit 30 s after quit() during conversion; stderr: ${session.stderr.slice(-500)}`, session);
        session.child.kill("SIGKILL");
      } else if (session.exitCode !== 0) {
        violate("bad exit status", `${session.exitCode} after quit(status = 0) during conversion; stderr: ${session.stderr.slice(-500)}`, session);
      }
      for (const [, req] of session.pending) violate("lost answer", `${req.line.slice(0, 300)} (quit() during conversion)`, session);
      session = startServer(++n);
      continue;
    }
    if (session.exited) {
      // Died while serving: every request in flight is lost.
      // Tools run one at a time, in order: the oldest request in flight is the
      // one the server died on (the replay file shows it for sure).
      const first = session.pending.values().next().value;
      violate("server crash", `exit ${session.exitCode} with ${session.pending.size} request(s) in flight; oldest: ${first ? first.line.slice(0, 300) : "(none)"}; stderr: ${session.stderr.slice(-800)}`, session);
      for (const [, req] of session.pending) violate("lost answer", req.line.slice(0, 300), null);
      session = startServer(++n);
      continue;
    }
    if (session.pending.size && Date.now() - session.lastAnswer > 60000) {
      violate("stall", `no answer for 60 s with ${session.pending.size} in flight; stderr: ${session.stderr.slice(-500)}`, session);
      session.child.kill("SIGKILL");
      await sleep(100);
      session.pending.clear();
      session = startServer(++n);
      continue;
    }
    if (!session.ready || session.pending.size >= windowSize || session.child.stdin.writableNeedDrain) {
      await sleep(1);
      continue;
    }
    if (!session.wantQuit && chance(0.00015)) session.wantQuit = true;
    if (session.wantQuit) {
      // Now and then a value whose conversion ends R, sent alone (nothing
      // else in flight) so that every request sent must be answered.
      if (session.pending.size) {
        await sleep(1);
        continue;
      }
      const id = newId();
      const version = session.modern ? "2026-07-28" : session.version;
      const meta = session.modern ? metaFor(version) : null;
      const req = { id, version, kind: "ret", tool: "ret_quit", def: "CallToolResult", line: seedCallLine(id, meta, "ret_quit") };
      session.pending.set(id.key, req);
      send(session, req.line);
      session.quitting = Date.now();
      stats.quits += 1;
      inputs += 1;
      continue;
    }
    const req = genRequest(session);
    if (req.id) session.pending.set(req.id.key, req);
    send(session, req.line);
    inputs += 1;
    // A fresh server now and then, so every era and version is served often.
    if (chance(0.0005)) {
      await finish(session, "rotation");
      session = startServer(++n);
    }
  }
  await finish(session, "end of run");
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  console.log(`${inputs} inputs in ${secs} s over ${stats.sessions} server(s): ${stats.calls} calls with random arguments, ${stats.rets} random R return values, ${stats.other} other (${stats.notifications} notifications), ${stats.quits} ended R while converting a result`);
  console.log(`${stats.answers} answers (${stats.toolErrors} tool errors, ${stats.protocolErrors} protocol errors), ${stats.validated} schema-validated; answers by version: ${JSON.stringify(stats.byVersion)}`);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const line = ["server crash", "lost answer", "duplicate answer", "answer nobody asked for", "non-JSON stdout line",
    "schema-invalid answer", "internal error (-32603)", "lying error", "protocol error for a call of a known tool",
    "stall", "no exit after stdin closed", "bad exit status"].map((k) => `${k}: ${counts[k] || 0}`).join(", ");
  console.log(`violations: ${total} (${line})`);
  for (const v of violations) console.log(`- ${v.kind}: ${v.detail}${v.replay ? `\n  replay: node ${join("tests", "fuzz", "fuzz-r.mjs")} --replay ${v.replay}` : ""}`);
  console.log(`reproduce: node tests/fuzz/fuzz-r.mjs --seed ${seedText} --seconds ${seconds}${Number.isFinite(maxInputs) ? ` --inputs ${maxInputs}` : ""}`);
  process.exit(total ? 1 : 0);
}

// Send a saved file one line at a time and show each answer and the stderr.
async function replay(file) {
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l && !l.startsWith("#"));
  const child = spawn(rscript, ["--vanilla", serverScript], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => { out += d.toString("utf8"); });
  let exited = null;
  child.on("exit", (c, s) => { exited = c === null ? `signal ${s}` : c; });
  for (const l of lines) {
    if (exited !== null) break;
    out = "";
    child.stdin.write(l + "\n");
    const hasId = /^\{"jsonrpc":"2\.0","id":/.test(l);
    const until = Date.now() + (hasId ? 10000 : 200);
    while (exited === null && Date.now() < until && !(hasId && out.includes("\n"))) await sleep(2);
    console.log(`-> ${l.slice(0, 400)}`);
    if (out) console.log(`<- ${out.trimEnd().slice(0, 800)}`);
  }
  child.stdin.end();
  while (exited === null) await sleep(10);
  console.log(`server exited: ${exited}`);
}

if (replayFile) await replay(replayFile);
else await fuzz();
