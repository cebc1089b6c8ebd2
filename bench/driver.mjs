#!/usr/bin/env node
// Benchmark driver for mcplite: launches real servers the way an MCP client
// does (`Rscript --vanilla server.R`, stdio pipes) and measures them side by
// side. Plain node (>= 18), no npm modules.
//
// Columns: our package ("ours"), the pure-R release from CRAN ("cran") and a
// bare stdio loop doing the same R call ("bare"). Each column gets its own
// R_LIBS so the two packages never mix; the driver checks the serverInfo
// version each package reports.
//
// Repetitions are interleaved (rep 1: ours, cran, bare; rep 2: ...), and ratios
// are computed per repetition before taking medians, so slow phases of a noisy
// machine hit all columns alike.

import { spawn, execFileSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVERS = path.join(HERE, 'servers');

// ---------------------------------------------------------------- parameters
const env = process.env;
const quick = process.argv.includes('--quick');
const int = (name, dflt, q) => {
  const v = env[name];
  if (v !== undefined && v !== '') return Number.parseInt(v, 10);
  return quick && q !== undefined ? q : dflt;
};
const P = {
  reps: int('BENCH_REPS', 5, 2),
  // Throughput runs last BENCH_THROUGHPUT_MS (at least BENCH_MIN_CALLS calls), so
  // a fast server gets enough calls to measure and a slow one does not eat the budget.
  throughputMs: int('BENCH_THROUGHPUT_MS', 2000, 700),
  minCalls: int('BENCH_MIN_CALLS', 200, 100),
  window: int('BENCH_WINDOW', 64, 64), // requests in flight
  latency: int('BENCH_LATENCY_CALLS', 300, 60), // sequential calls per rep
  coldReps: int('BENCH_COLD_REPS', 10, 3),
  dfRows: int('BENCH_DF_ROWS', 100000, 20000),
  dfCalls: int('BENCH_DF_CALLS', 3, 2), // timed calls per rep (after 1 warm-up)
  nTools: int('BENCH_N_TOOLS', 200, 200),
  listCalls: int('BENCH_LIST_CALLS', 50, 15),
  traceReps: int('BENCH_TRACE_REPS', 3, 1),
  timeoutMs: int('BENCH_TIMEOUT_S', 120, 120) * 1000,
  budgetS: int('BENCH_BUDGET_S', 600, 600), // soft cap: later reps are skipped past it
};
const onlyScenarios = (env.BENCH_SCENARIOS || '1,2,3,4,5').split(',').map((s) => s.trim());
const wantImpls = (env.BENCH_IMPLS || 'ours,cran,bare').split(',').map((s) => s.trim());
const outDir = env.BENCH_OUT || path.join(HERE, 'results');
const startedAt = Date.now();
const overBudget = () => (Date.now() - startedAt) / 1000 > P.budgetS;

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const INIT =
  '"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcplite-bench","version":"1"}}';
const line = {
  call: (id, name, args) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args},${META}}}`,
  list: (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{${META}}}`,
  discover: (id) => `{"jsonrpc":"2.0","id":${id},"method":"server/discover","params":{${META}}}`,
  init: (id) => `{"jsonrpc":"2.0","id":${id},${INIT}}`,
  initialized: () => '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  legacyList: (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`,
};

// ---------------------------------------------------------------- stats
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const quantile = (xs, q) => {
  // nearest-rank: p99 of 300 samples is the 297th smallest
  const s = sorted(xs);
  if (!s.length) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const median = (xs) => {
  const s = sorted(xs);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const summary = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length, all: xs });

// ---------------------------------------------------------------- servers
class Server {
  constructor(impl, script, extraEnv = {}) {
    this.impl = impl;
    this.script = path.join(impl.dir || SERVERS, script);
    this.extraEnv = extraEnv;
    this.pending = new Map();
    this.nextId = 1;
    this.stderrBytes = 0;
    this.stderrTail = '';
    this.lines = 0;
  }

  start() {
    const childEnv = { ...cleanEnv(), ...this.impl.env, ...this.extraEnv };
    this.t0 = now();
    const [cmd, args] = this.impl.command ? this.impl.command : ['Rscript', ['--vanilla', this.script]];
    this.proc = spawn(cmd, args, { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    // 'close' fires after the exit and after stdout/stderr are fully read.
    this.exited = new Promise((resolve) => this.proc.on('close', (code, sig) => resolve({ code, sig })));
    this.proc.on('error', (e) => this.failAll(e));
    this.proc.stdin.on('error', () => {}); // EPIPE when a server dies; reported through exit
    let chunks = [];
    this.proc.stdout.on('data', (buf) => {
      let start = 0;
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, start)) {
        chunks.push(buf.subarray(start, i));
        const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
        chunks = [];
        start = i + 1;
        this.onLine(text, now());
      }
      if (start < buf.length) chunks.push(buf.subarray(start));
    });
    this.stderrSpans = 0;
    let carry = '';
    this.proc.stderr.on('data', (buf) => {
      this.stderrBytes += buf.length;
      const text = buf.toString('utf8');
      // Count exported spans (OTLP JSON "spanId", otelsdk's "span_id") across chunk edges.
      const joined = carry + text;
      this.stderrSpans += (joined.match(/"spanId"|(?<![a-z_])span_id\s*:/g) || []).length;
      carry = joined.slice(-12).replace(/^.*("spanId"|span_id\s*:)/s, '');
      this.stderrTail = (this.stderrTail + text).slice(-20000);
    });
    this.proc.on('close', (code, sig) => {
      if (this.pending.size) this.failAll(new Error(`${this.impl.label} ${path.basename(this.script)} exited (code ${code}, signal ${sig}) with ${this.pending.size} requests pending; stderr tail:\n${this.stderrTail}`));
    });
    return this;
  }

  onLine(text, t) {
    this.lines++;
    if (!text.trim()) return;
    let entry;
    if (this.pending.size === 1) {
      // One request in flight: no need to parse a possibly huge line to match it.
      entry = this.pending.entries().next().value;
    } else {
      let id;
      try {
        id = JSON.parse(text).id;
      } catch (e) {
        this.failAll(new Error(`${this.impl.label}: unparseable stdout line: ${text.slice(0, 200)}`));
        return;
      }
      entry = [id, this.pending.get(id)];
    }
    if (!entry || !entry[1]) {
      this.failAll(new Error(`${this.impl.label}: response for unknown id: ${text.slice(0, 200)}`));
      return;
    }
    this.pending.delete(entry[0]);
    clearTimeout(entry[1].timer);
    entry[1].resolve({ text, t });
  }

  failAll(err) {
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }

  // Send one request line built by `make(id)`; resolves with {text, t, sent}.
  request(make) {
    const id = this.nextId++;
    const text = make(id);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.impl.label}: timeout waiting for id ${id}; stderr tail:\n${this.stderrTail}`));
      }, P.timeoutMs);
      const sent = now();
      this.pending.set(id, { resolve: (r) => resolve({ ...r, sent }), reject, timer });
      this.proc.stdin.write(text + '\n');
    });
  }

  notify(text) {
    this.proc.stdin.write(text + '\n');
  }

  // Client shutdown as the spec describes it: close stdin, wait, then escalate.
  async close() {
    this.proc.stdin.end();
    const timeout = (ms) => new Promise((r) => setTimeout(() => r('timeout'), ms));
    if ((await Promise.race([this.exited, timeout(10000)])) === 'timeout') {
      this.proc.kill('SIGTERM');
      if ((await Promise.race([this.exited, timeout(3000)])) === 'timeout') this.proc.kill('SIGKILL');
    }
    return this.exited;
  }
}

function cleanEnv() {
  // No inherited tracing configuration or R_LIBS: each column sets its own.
  const e = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('OTEL_') || k === 'R_LIBS') continue;
    e[k] = v;
  }
  return e;
}

const parse = (r) => JSON.parse(r.text);
function expectResult(r, what) {
  const msg = parse(r);
  if (!msg.result) throw new Error(`${what}: expected a result, got ${r.text.slice(0, 300)}`);
  return msg.result;
}

// ---------------------------------------------------------------- columns
const CRAN_LIB = env.BENCH_CRAN_LIB || path.join(HERE, '.lib-cran');
// otelsdk (the exporter half of R's otel) lives in its own library and is added
// to the CRAN column only for scenario 5, so scenarios 1-4 never see it.
const OTELSDK_LIB = env.BENCH_OTELSDK_LIB || path.join(HERE, '.lib-otelsdk');
// Our package: MCPLITE_LIB, else an R_LIBS the caller set, else R's default libraries.
const OUR_LIB = env.MCPLITE_LIB || env.R_LIBS || '';
const IMPLS = [
  // BENCH_OURS_SERVERS: a directory of pkg-*.R scripts to use for our column
  // instead of servers/ (for trying out work in progress).
  { key: 'ours', label: 'mcplite', env: OUR_LIB ? { R_LIBS: OUR_LIB } : {}, pkg: true, dir: env.BENCH_OURS_SERVERS },
  // BENCH_CRAN_LABEL: when BENCH_CRAN_LIB holds another build of mcplite (an
  // earlier commit), so one run pairs the two builds.
  { key: 'cran', label: env.BENCH_CRAN_LABEL || 'mcplite (CRAN)', env: { R_LIBS: CRAN_LIB }, pkg: true },
  { key: 'bare', label: 'bare limit', env: {}, pkg: false },
];
const script = (impl, kind) => `${impl.pkg ? 'pkg' : 'bare'}-${kind}.R`;

function rQuery(impl, expr) {
  try {
    return execFileSync('Rscript', ['--vanilla', '-e', expr], {
      env: { ...cleanEnv(), ...impl.env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return '';
  }
}

async function probeColumns() {
  const active = [];
  const ver = {};
  for (const impl of IMPLS) {
    if (!wantImpls.includes(impl.key)) continue;
    if (impl.pkg) {
      const v = rQuery(impl, 'cat(as.character(packageVersion("mcplite")), find.package("mcplite"))');
      if (!v) {
        console.error(`# ${impl.label}: package not installed for this column; column skipped`);
        impl.missing = 'not installed';
        continue;
      }
      [impl.version, impl.path] = v.split(' ');
      ver[impl.key] = impl.version;
    }
    active.push(impl);
  }
  const ours = IMPLS[0];
  const cran = IMPLS[1];
  if (ver.ours && ver.cran && ver.ours === ver.cran && ours.path === cran.path) {
    console.error('# mcplite column resolves to the CRAN library: set MCPLITE_LIB or install the package; column skipped');
    ours.missing = 'resolves to CRAN copy';
    active.splice(active.indexOf(ours), 1);
  }
  if (ver.cran && !env.BENCH_CRAN_LABEL) cran.label = `mcplite ${ver.cran} (CRAN)`;
  if (ver.ours) ours.label = `mcplite ${ver.ours}`;
  // The server must really be the package we think it is: check serverInfo.
  for (const impl of active.filter((i) => i.pkg)) {
    const s = new Server(impl, script(impl, 'add')).start();
    try {
      const res = await s.request(line.discover);
      const msg = parse(res);
      const info = msg.result?._meta?.['io.modelcontextprotocol/serverInfo'];
      if (info && info.version !== impl.version) throw new Error(`${impl.label} reports serverInfo version ${info.version}`);
    } finally {
      await s.close();
    }
  }
  return active;
}

// ---------------------------------------------------------------- scenario 1
// Keeps `window` requests in flight until `ms` have passed and at least
// `minCalls` were sent, then drains; calls/s = answers / (last answer - first write).
async function pipelined(srv, ms, minCalls, window, make) {
  let sent = 0;
  let done = 0;
  const t0 = now();
  let last = t0;
  await new Promise((resolve, reject) => {
    const more = () => sent < minCalls || now() - t0 < ms;
    const one = () => {
      sent++;
      srv.request(make).then((r) => {
        done++;
        last = r.t;
        if (more()) one();
        else if (done === sent) resolve();
      }, reject);
    };
    for (let k = 0; k < window; k++) one();
  });
  return { cps: (done / (last - t0)) * 1000, calls: done };
}

async function sequential(srv, n, make) {
  const lat = [];
  for (let k = 0; k < n; k++) {
    const r = await srv.request(make);
    lat.push(r.t - r.sent);
  }
  return lat;
}

const addCall = (id) => line.call(id, 'add', `{"x":${id},"y":2}`);

async function checkAdd(srv) {
  const r = await srv.request((id) => line.call(id, 'add', `{"x":${id},"y":2}`));
  const res = expectResult(r, `${srv.impl.label} add`);
  const id = parse(r).id;
  const text = res.content?.[0]?.text;
  if (text !== String(id + 2) || res.isError) throw new Error(`${srv.impl.label}: add returned ${r.text.slice(0, 300)}`);
}

// Reference for scenario 1: the same requests echoed back by `cat`, i.e. the
// cost of the pipes and of this driver alone, with no server work at all.
async function pipeFloor() {
  const srv = new Server({ label: 'cat', env: {}, command: ['cat', []] }, 'cat').start();
  try {
    await sequential(srv, 20, addCall);
    const { cps } = await pipelined(srv, P.throughputMs, P.minCalls, P.window, addCall);
    const lat = await sequential(srv, P.latency, addCall);
    return { cps, p50: median(lat), p99: quantile(lat, 0.99) };
  } finally {
    await srv.close();
  }
}

async function scenarioAdd(impl, extraEnv = {}, latCalls = P.latency) {
  const srv = new Server(impl, script(impl, 'add'), extraEnv).start();
  try {
    await checkAdd(srv);
    await sequential(srv, 20, addCall); // warm-up
    const { cps, calls } = await pipelined(srv, P.throughputMs, P.minCalls, P.window, addCall);
    const lat = await sequential(srv, latCalls, addCall);
    return { cps, calls, p50: median(lat), p99: quantile(lat, 0.99), srv, requests: 21 + calls + latCalls };
  } finally {
    await srv.close();
  }
}

// ---------------------------------------------------------------- scenario 2
async function coldOnce(impl, kind) {
  const srv = new Server(impl, script(impl, 'add')).start();
  try {
    let r;
    if (kind === 'list') {
      r = await srv.request(line.list);
      if (!Array.isArray(expectResult(r, 'cold tools/list').tools)) throw new Error('no tools');
    } else if (kind === 'discover') {
      r = await srv.request(line.discover);
      const msg = parse(r);
      impl.discoverAnswer = msg.result
        ? `result: ${Object.keys(msg.result).join(', ')}`
        : `error ${msg.error?.code}: ${msg.error?.message}`;
    } else {
      // legacy client: initialize, wait for its answer, initialized, tools/list
      const init = await srv.request(line.init);
      expectResult(init, 'initialize');
      srv.notify(line.initialized());
      r = await srv.request(line.legacyList);
      if (!Array.isArray(expectResult(r, 'legacy tools/list').tools)) throw new Error('no tools');
    }
    return r.t - srv.t0;
  } finally {
    await srv.close();
  }
}

function rscriptNull(impl = null) {
  // With a package column: the same, but loading that mcplite's namespace
  // (shows what package loading alone adds to R's own start-up).
  const expr = impl ? 'invisible(loadNamespace("mcplite"))' : 'NULL';
  return new Promise((resolve, reject) => {
    const t0 = now();
    const p = spawn('Rscript', ['--vanilla', '-e', expr], { env: { ...cleanEnv(), ...(impl?.env ?? {}) }, stdio: 'ignore' });
    p.on('exit', () => resolve(now() - t0));
    p.on('error', reject);
  });
}

// ---------------------------------------------------------------- scenario 3
async function scenarioDf(impl) {
  const srv = new Server(impl, script(impl, 'df'), { BENCH_DF_ROWS: String(P.dfRows) }).start();
  const big = (id) => line.call(id, 'big_frame', '{}');
  try {
    const first = await srv.request(big); // warm-up, and the correctness check
    const res = expectResult(first, `${impl.label} big_frame`);
    const sc = res.structuredContent;
    if (!Array.isArray(sc) || sc.length !== P.dfRows || sc[0].id !== 1 || typeof sc[0].group !== 'string')
      throw new Error(`${impl.label}: structuredContent is not the ${P.dfRows}-row frame`);
    if (JSON.parse(res.content[0].text).length !== P.dfRows) throw new Error(`${impl.label}: text fallback is not the frame`);
    const bytes = Buffer.byteLength(first.text);
    impl.dfAnswer = first.text; // for the floor reference (not kept in the results)
    const times = [];
    for (let k = 0; k < P.dfCalls; k++) {
      const r = await srv.request(big);
      times.push(r.t - r.sent);
    }
    return { ms: median(times), bytes };
  } finally {
    await srv.close();
  }
}

// Floor for scenario 3: the same answer line, written by `cat` from a file
// whenever a request line arrives, through the same driver code. What is left
// is the pipe and the driver reading and splitting the line: no server could
// answer faster, so "time above the floor" is what a server adds.
async function dfFloor(answer, dir) {
  const file = path.join(dir, 'df-answer.json');
  fs.writeFileSync(file, answer + '\n');
  const impl = { label: 'cat (floor)', env: {}, command: ['sh', ['-c', 'while IFS= read -r l; do cat "$0"; done', file]] };
  const srv = new Server(impl, 'cat').start();
  const big = (id) => line.call(id, 'big_frame', '{}');
  try {
    const first = await srv.request(big);
    if (first.text !== answer) throw new Error('cat floor: echoed line differs from the answer');
    const times = [];
    for (let k = 0; k < P.dfCalls; k++) {
      const r = await srv.request(big);
      times.push(r.t - r.sent);
    }
    return median(times);
  } finally {
    await srv.close();
  }
}

// ---------------------------------------------------------------- scenario 4
async function scenarioTools(impl) {
  const srv = new Server(impl, script(impl, 'tools'), { BENCH_N_TOOLS: String(P.nTools) }).start();
  try {
    const first = await srv.request(line.list);
    const tools = expectResult(first, `${impl.label} tools/list`).tools;
    if (!Array.isArray(tools) || tools.length !== P.nTools) throw new Error(`${impl.label}: tools/list has ${tools?.length} tools`);
    await sequential(srv, 3, line.list);
    const lat = await sequential(srv, P.listCalls, line.list);
    return { p50: median(lat), p99: quantile(lat, 0.99), bytes: Buffer.byteLength(first.text) };
  } finally {
    await srv.close();
  }
}

// ---------------------------------------------------------------- scenario 5
function otlpReceiver() {
  return new Promise((resolve) => {
    const stats = { requests: 0, bytes: 0, spans: 0, protobufSpans: 0 };
    const server = http.createServer((req, res) => {
      const parts = [];
      req.on('data', (b) => parts.push(b));
      req.on('end', () => {
        const body = Buffer.concat(parts);
        const json = String(req.headers['content-type'] || '').includes('json');
        stats.requests++;
        stats.bytes += body.length;
        if (json) stats.spans += (body.toString('utf8').match(/"spanId"/g) || []).length;
        else stats.protobufSpans += countProtobufSpans(body);
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? '{}' : '');
      });
    });
    server.listen(0, '127.0.0.1', () => resolve({ server, stats, port: server.address().port }));
  });
}

// Count spans in an ExportTraceServiceRequest without a protobuf library:
// resource_spans = 1, scope_spans = 2 (inside it), spans = 2 (inside that).
function countProtobufSpans(buf) {
  const fields = (b, want, fn) => {
    let i = 0;
    const varint = () => {
      let v = 0;
      let shift = 0;
      for (;;) {
        const byte = b[i++];
        v += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) return v;
        shift += 7;
      }
    };
    while (i < b.length) {
      const key = varint();
      const wire = key % 8;
      if (wire === 0) varint();
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else if (wire === 2) {
        const len = varint();
        if (Math.floor(key / 8) === want) fn(b.subarray(i, i + len));
        i += len;
      } else return;
    }
  };
  let n = 0;
  try {
    fields(buf, 1, (rs) => fields(rs, 2, (ss) => fields(ss, 2, () => n++)));
  } catch {
    return NaN;
  }
  return n;
}

function countFileSpans(dir) {
  let n = 0;
  for (const f of fs.readdirSync(dir)) n += (fs.readFileSync(path.join(dir, f), 'utf8').match(/"spanId"/g) || []).length;
  return n;
}

const TRACE_CONFIGS = ['off', 'none', 'stderr', 'otlp', 'otlp-json', 'otlp/file'];
const traceConfigs = (port, dir) => {
  const otlp = (protocol) => ({
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
  });
  return {
    off: {},
    none: { OTEL_TRACES_EXPORTER: 'none' },
    stderr: { OTEL_TRACES_EXPORTER: 'stderr' },
    otlp: otlp('http/protobuf'),
    'otlp-json': otlp('http/json'),
    'otlp/file': { OTEL_TRACES_EXPORTER: 'otlp/file', OTEL_EXPORTER_OTLP_FILE: path.join(dir, 'spans.jsonl') },
  };
};

// Tracing counts as available for a column when a stderr exporter really
// writes a span for a tools/call to stderr.
async function tracingAvailable(impl, traceEnv) {
  const srv = new Server(impl, script(impl, 'add'), { ...traceEnv, OTEL_TRACES_EXPORTER: 'stderr' }).start();
  try {
    await checkAdd(srv);
  } finally {
    await srv.close();
  }
  return /tools\/call/.test(srv.stderrTail);
}

// ---------------------------------------------------------------- main
async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  const active = await probeColumns();
  const results = { params: P, columns: {}, s1: {}, s2: {}, s3: {}, s4: {}, s5: {}, rscriptNull: [] };
  for (const impl of IMPLS) results.columns[impl.key] = { label: impl.label, version: impl.version, missing: impl.missing };
  const log = (...a) => console.error('#', ...a);
  // Rotate the column order each repetition so no column always runs first
  // (or right after the heaviest one).
  const order = (rep) => active.map((_, i) => active[(i + rep) % active.length]);
  const push = (obj, key, val) => (obj[key] ||= []).push(val);
  // A column that fails in a scenario is reported and skipped for the rest of
  // that scenario; the other columns and scenarios still run.
  const failed = (sc, impl) => results.columns[impl.key].failed?.[sc];
  const guard = async (sc, impl, fn) => {
    if (failed(sc, impl)) return undefined;
    try {
      return await fn();
    } catch (e) {
      const msg = String(e.message || e).split('\n')[0];
      (results.columns[impl.key].failed ||= {})[sc] = msg;
      log(`scenario ${sc}, ${impl.label}: FAILED: ${String(e.message || e)}`);
      return undefined;
    }
  };

  if (onlyScenarios.includes('1')) {
    for (let rep = 0; rep < P.reps && !(rep > 0 && overBudget()); rep++) {
      results.pipeFloor ||= [];
      results.pipeFloor.push(await pipeFloor());
      for (const impl of order(rep)) {
        const r = await guard('1', impl, () => scenarioAdd(impl));
        if (!r) continue;
        delete r.srv;
        push(results.s1, impl.key, r);
        log(`s1 rep ${rep + 1} ${impl.label}: ${r.cps.toFixed(0)} calls/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`);
      }
    }
  }
  if (onlyScenarios.includes('2')) {
    for (let rep = 0; rep < P.coldReps && !(rep > 0 && overBudget()); rep++) {
      for (const kind of ['list', 'discover', 'legacy']) {
        results.rscriptNull.push(await rscriptNull());
        for (const impl of order(rep)) {
          const ms = await guard('2', impl, () => coldOnce(impl, kind));
          if (ms !== undefined) push(results.s2, `${impl.key}.${kind}`, ms);
        }
      }
      for (const impl of order(rep)) if (impl.pkg) push(results.s2, `${impl.key}.load`, await rscriptNull(impl));
      log(`s2 rep ${rep + 1}: Rscript NULL ${results.rscriptNull.at(-1).toFixed(0)} ms; ` +
        active.map((i) => `${i.label} list ${results.s2[`${i.key}.list`]?.at(-1)?.toFixed(0)} ms`).join(', '));
    }
    for (const impl of active) results.columns[impl.key].discoverAnswer = impl.discoverAnswer;
  }
  if (onlyScenarios.includes('3')) {
    const tmp3 = fs.mkdtempSync(path.join(os.tmpdir(), 'mcplite-bench-df-'));
    try {
      for (let rep = 0; rep < P.reps && !(rep > 0 && overBudget()); rep++) {
        for (const impl of order(rep)) {
          const r = await guard('3', impl, () => scenarioDf(impl));
          if (!r) continue;
          push(results.s3, impl.key, r);
          log(`s3 rep ${rep + 1} ${impl.label}: ${r.ms.toFixed(0)} ms (${(r.bytes / 1e6).toFixed(1)} MB)`);
        }
        // The floor, with our column's answer line (or another column's), in
        // the same repetition so it pairs with the server times.
        const answer = (active.find((i) => i.key === 'ours' && i.dfAnswer) ?? active.find((i) => i.dfAnswer))?.dfAnswer;
        if (answer) {
          const ms = await dfFloor(answer, tmp3);
          (results.dfFloor ||= []).push({ ms, bytes: Buffer.byteLength(answer) });
          log(`s3 rep ${rep + 1} floor (cat): ${ms.toFixed(1)} ms`);
        }
      }
    } finally {
      for (const impl of active) delete impl.dfAnswer;
      fs.rmSync(tmp3, { recursive: true, force: true });
    }
  }
  if (onlyScenarios.includes('4')) {
    for (let rep = 0; rep < P.reps && !(rep > 0 && overBudget()); rep++)
      for (const impl of order(rep)) {
        const r = await guard('4', impl, () => scenarioTools(impl));
        if (!r) continue;
        push(results.s4, impl.key, r);
        log(`s4 rep ${rep + 1} ${impl.label}: p50 ${r.p50.toFixed(2)} ms (${(r.bytes / 1e3).toFixed(0)} kB)`);
      }
  }
  if (onlyScenarios.includes('5')) {
    const { server, stats, port } = await otlpReceiver();
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcplite-bench-'));
    try {
      for (const impl of active.filter((i) => i.pkg)) {
        const traceEnv =
          impl.key === 'cran' && fs.existsSync(path.join(OTELSDK_LIB, 'otelsdk')) ? { R_LIBS: `${CRAN_LIB}:${OTELSDK_LIB}` } : {};
        const ok = (await guard('5', impl, () => tracingAvailable(impl, traceEnv))) ?? false;
        results.columns[impl.key].tracing = ok;
        if (!ok) {
          results.columns[impl.key].tracingWhy = impl.key === 'cran' && !traceEnv.R_LIBS
            ? 'otelsdk not installed (BENCH_OTELSDK=1 bash bench/run.sh installs it)'
            : 'not yet available: no span written with OTEL_TRACES_EXPORTER=stderr';
          log(`s5 ${impl.label}: tracing not available (${results.columns[impl.key].tracingWhy})`);
          continue;
        }
        const cfgs = traceConfigs(port, tmp);
        for (let rep = 0; rep < P.traceReps && !(rep > 0 && overBudget()); rep++)
          for (const [name, e] of Object.entries(cfgs)) {
            const before = { ...stats };
            const file = path.join(tmp, 'spans.jsonl');
            fs.rmSync(file, { force: true });
            const r = await guard(`5 ${name}`, impl, () => scenarioAdd(impl, { ...traceEnv, ...e }, Math.ceil(P.latency / 2)));
            if (!r) continue;
            r.otlpRequests = stats.requests - before.requests;
            // Spans that reached the exporter's destination, to compare with the
            // requests sent (a tracer that drops spans would look cheap).
            r.spans =
              name === 'stderr' ? r.srv.stderrSpans
              : name === 'otlp' ? stats.protobufSpans - before.protobufSpans
              : name === 'otlp-json' ? stats.spans - before.spans
              : name === 'otlp/file' ? countFileSpans(tmp)
              : 0;
            delete r.srv;
            push(results.s5, `${impl.key}.${name}`, r);
            log(`s5 rep ${rep + 1} ${impl.label} ${name}: ${r.cps.toFixed(0)} calls/s, p50 ${r.p50.toFixed(2)} ms, ` +
              `${r.spans} spans exported for ${r.requests} requests` + (r.otlpRequests ? ` in ${r.otlpRequests} OTLP posts` : ''));
          }
      }
    } finally {
      server.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  results.elapsedS = (Date.now() - startedAt) / 1000;
  fs.writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify(results, null, 1));
  const md = renderTable(results);
  fs.writeFileSync(path.join(outDir, 'latest.md'), md);
  console.log(md);
  if (Object.values(results.columns).some((c) => c.failed)) {
    console.error('# some columns failed in some scenarios: see FAILED cells and the log above');
    process.exitCode = 1;
  }
}

// ---------------------------------------------------------------- table
function renderTable(R) {
  const cols = ['ours', 'cran', 'bare'];
  const lab = (k) => R.columns[k].label;
  const f = (x, d = 1) => (Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(d)) : '–');
  const cell = (xs, d) => {
    if (!xs || !xs.length) return null;
    const s = summary(xs);
    return `${f(s.median, d)} (${f(s.min, d)}–${f(s.max, d)})`;
  };
  const colCell = (k, xs, d, sc) =>
    cell(xs, d) ??
    (R.columns[k].missing ? `n/a (${R.columns[k].missing})` : R.columns[k].failed?.[sc] ? `FAILED (${R.columns[k].failed[sc].slice(0, 80)})` : 'n/a');
  // Paired ratio per repetition: a/b, summarised as median (min–max).
  const ratio = (a, b) => {
    if (!a || !b) return null;
    const n = Math.min(a.length, b.length);
    const rs = [];
    for (let i = 0; i < n; i++) rs.push(a[i] / b[i]);
    return rs;
  };
  const rcell = (rs) => (rs ? `${f(median(rs), 2)}× (${f(Math.min(...rs), 2)}–${f(Math.max(...rs), 2)})` : '–');
  const signed = (x) => (x >= 0 ? '+' : '−') + Math.abs(x).toFixed(0);
  const verdict = (rs, ok) => (rs ? (ok(median(rs)) ? 'met' : 'missed') : 'not measured');

  const rows = [];
  const head =
    `| Scenario | ${cols.map(lab).join(' | ')} | mcplite speed-up vs ${lab('cran')} | mcplite cost vs bare | Target | Status |\n` +
    `| --- | ${cols.map(() => '---:').join(' | ')} | ---: | ---: | --- | --- |`;
  const get = (obj, k, field) => obj[k]?.map((r) => r[field]);

  const ran = (n) => onlyScenarios.includes(n);
  // 1. throughput (higher is better): speed-up = ours/cran, cost = bare/ours
  if (ran('1')) {
    const v = Object.fromEntries(cols.map((k) => [k, get(R.s1, k, 'cps')]));
    const up = ratio(v.ours, v.cran);
    const cost = ratio(v.bare, v.ours);
    rows.push(`| 1. x + y, calls/s, ${R.params.window} in flight for ${R.params.throughputMs / 1000} s | ${cols.map((k) => colCell(k, v[k], 0, '1')).join(' | ')} | ${rcell(up)} | ${rcell(cost)} | ≥10× CRAN; ≤2× bare | ` +
      `${verdict(up, (x) => x >= 10)} / ${verdict(cost, (x) => x <= 2)} |`);
    for (const [field, name] of [['p50', 'median'], ['p99', 'p99']]) {
      const w = Object.fromEntries(cols.map((k) => [k, get(R.s1, k, field)]));
      rows.push(`| 1. x + y, latency ${name} ms, 1 in flight | ${cols.map((k) => colCell(k, w[k], 2, '1')).join(' | ')} | ${rcell(ratio(w.cran, w.ours))} | ${rcell(ratio(w.ours, w.bare))} | – | – |`);
    }
    if (R.pipeFloor?.length) {
      const pf = (field, d) => cell(R.pipeFloor.map((r) => r[field]), d);
      rows.push(`| 1. reference: the same requests echoed by \`cat\` (pipes + driver only): calls/s; latency median, p99 ms | ${pf('cps', 0)}; ${pf('p50', 3)}, ${pf('p99', 3)} | | | | | – | – |`);
    }
  }
  // 2. cold start (lower is better)
  if (ran('2')) {
    const nul = R.rscriptNull;
    for (const [kind, name] of [['list', 'first tools/list (modern, no handshake)'], ['legacy', 'first tools/list (initialize first)'], ['discover', 'first server/discover']]) {
      const v = Object.fromEntries(cols.map((k) => [k, R.s2[`${k}.${kind}`]]));
      const up = ratio(v.cran, v.ours);
      // Distance to the reference: difference of medians (the NULL runs are
      // independent samples, so pairing them would only add their noise).
      const over = v.ours && nul.length ? median(v.ours) - median(nul) : null;
      const target = kind === 'discover' ? '–' : 'no slower than CRAN; ≤ Rscript NULL + 100 ms';
      const status = kind === 'discover' ? '–' :
        `${verdict(up, (x) => x >= 1)} / ${over ? (over <= 100 ? 'met' : 'missed') : 'not measured'} (${over !== null ? signed(over) : '–'} ms vs NULL)`;
      rows.push(`| 2. cold start to ${name}, ms | ${cols.map((k) => colCell(k, v[k], 0, '2')).join(' | ')} | ${rcell(up)} | ${rcell(ratio(v.ours, v.bare))} | ${target} | ${status} |`);
    }
    rows.push(`| 2. reference: \`Rscript --vanilla -e 'NULL'\` to exit, ms | ${cols.map(() => cell(nul, 0) ?? '–').join(' | ')} | – | – | – | – |`);
    {
      const v = Object.fromEntries(cols.map((k) => [k, R.s2[`${k}.load`]]));
      rows.push(`| 2. reference: \`Rscript --vanilla -e 'loadNamespace("mcplite")'\` to exit, ms | ${cols.map((k) => cell(v[k], 0) ?? '–').join(' | ')} | ${rcell(ratio(v.cran, v.ours))} | – | – | – |`);
    }
  }
  // 3. large result
  if (ran('3')) {
    const v = Object.fromEntries(cols.map((k) => [k, get(R.s3, k, 'ms')]));
    const up = ratio(v.cran, v.ours);
    const mb = R.s3.ours?.[0]?.bytes ?? R.s3.cran?.[0]?.bytes ?? R.s3.bare?.[0]?.bytes;
    rows.push(`| 3. ${R.params.dfRows}-row data frame as structuredContent, ms per call (${f(mb / 1e6, 1)} MB line) | ${cols.map((k) => colCell(k, v[k], 0, '3')).join(' | ')} | ${rcell(up)} | ${rcell(ratio(v.ours, v.bare))} | ≥3× CRAN | ${verdict(up, (x) => x >= 3)} |`);
    if (R.dfFloor?.length) {
      const fl = R.dfFloor.map((r) => r.ms);
      // Time above the floor, paired per repetition.
      const above = (xs) => (xs ? xs.slice(0, fl.length).map((x, i) => x - fl[i]) : null);
      rows.push(`| 3. reference: the same answer line written by \`cat\` (pipes + driver only), ms; each column's time above it | ${cell(fl, 1)}; ${cols.filter((k) => v[k]?.length).map((k) => `${lab(k)} +${cell(above(v[k]), 1)}`).join('; ')} | | | | | – | – |`);
    }
  }
  // 4. tools/list with many tools
  if (ran('4')) {
    for (const [field, name] of [['p50', 'median'], ['p99', 'p99']]) {
      const v = Object.fromEntries(cols.map((k) => [k, get(R.s4, k, field)]));
      rows.push(`| 4. tools/list with ${R.params.nTools} tools, ${name} ms | ${cols.map((k) => colCell(k, v[k], 2, '4')).join(' | ')} | ${rcell(ratio(v.cran, v.ours))} | ${rcell(ratio(v.ours, v.bare))} | – | – |`);
    }
  }
  // 5. tracing: per column, throughput with each configuration relative to off
  const trace = [];
  for (const k of ran('5') ? ['ours', 'cran'] : []) {
    const c = R.columns[k];
    if (c.missing) {
      trace.push(`| ${c.label} | n/a (${c.missing}) | | | | |`);
      continue;
    }
    if (!c.tracing) {
      trace.push(`| ${c.label} | ${c.tracingWhy ?? 'not measured'} |${TRACE_CONFIGS.slice(1).map(() => ' – |').join('')}`);
      continue;
    }
    const off = R.s5[`${k}.off`]?.map((r) => r.cps);
    const cellsCps = TRACE_CONFIGS.map((n) => {
      const xs = R.s5[`${k}.${n}`]?.map((r) => r.cps);
      if (!xs) return '–';
      const p50 = R.s5[`${k}.${n}`].map((r) => r.p50);
      const runs = R.s5[`${k}.${n}`];
      const spans = ['off', 'none'].includes(n) ? '' : `; spans exported ${f(median(runs.map((r) => r.spans / r.requests)) * 100, 0)}%`;
      return `${f(median(xs), 0)} calls/s, p50 ${f(median(p50), 2)} ms` + (n === 'off' ? '' : `; cost ${rcell(ratio(off, xs))}`) + spans;
    });
    trace.push(`| ${c.label} | ${cellsCps.join(' | ')} |`);
  }

  const hw = hardware();
  return [
    `Run: ${new Date().toISOString()}, ${R.elapsedS.toFixed(0)} s total. ${hw.summary}`,
    `Parameters: ${JSON.stringify(R.params)}`,
    '',
    'Cells: median (min–max) over repetitions. Ratios are per repetition (paired), then median (min–max).',
    '"speed-up vs CRAN" > 1 means mcplite is faster; "cost vs bare" is how many times slower than the bare loop mcplite is.',
    '',
    head,
    ...rows,
    '',
    `server/discover as first message: ${cols.filter((k) => R.columns[k].discoverAnswer).map((k) => `${lab(k)}: ${R.columns[k].discoverAnswer}`).join('; ') || 'not measured'}`,
    '',
    ...(onlyScenarios.includes('5') ? ['### 5. Tracing overhead (x + y, pipelined throughput and single-request median latency)', ''] : []),
    ...(onlyScenarios.includes('5') ? [
      'Cells: median calls/s with 64 in flight, median single-request latency, cost = off calls/s ÷ traced calls/s (paired per repetition), and the share of requests whose span reached the exporter.',
      '',
      '| Column | off (no OTEL_* set) | OTEL_TRACES_EXPORTER=none | stderr | otlp, http/protobuf to a local receiver | otlp, http/json | otlp/file |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...trace] : []),
    '',
  ].join('\n');
}

function hardware() {
  const cpu = os.cpus()[0]?.model ?? '?';
  const mem = (os.totalmem() / 2 ** 30).toFixed(0);
  let r = '';
  try {
    r = execFileSync('Rscript', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    r = String(e.stderr || '');
  }
  r = r.split('\n')[0].replace(/^Rscript \(R\) version /, 'R ');
  return { summary: `Host: ${os.cpus().length} CPUs (${cpu}), ${mem} GiB RAM, ${r.trim()}, node ${process.version}.` };
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
