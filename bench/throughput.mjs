#!/usr/bin/env node
// Goal 1 of issue 41 ("Throughput"): calls per second of a trivial `add`
// tool, pipelined (BENCH_TP_WINDOW requests kept in flight) and sequential
// (one at a time), for mcplite and its peers in the same run:
//
// - mcplite: `Rscript --vanilla bench/servers/pkg-add.R`, one column per
//   build given on the command line (label=library, as bench/scale.mjs);
// - TS SDK 1.32: @modelcontextprotocol/sdk 1.32.2, McpServer with its stdio
//   server transport (peers/ts-sdk-add.cjs; it speaks the 2025 protocol, so
//   it gets the `initialize` handshake and plain requests);
// - server 2.4: @modelcontextprotocol/server 2.4.0 with serveStdio
//   (peers/ts-server-add.cjs; modern requests, as mcplite);
// - C floor: floor/echo.c, which answers every line with a fixed valid
//   result carrying its id, one write per read: the limit of the pipes and
//   of this driver (with --batch, one write per read instead of one per
//   answer: a second reference column).
//
//   node bench/throughput.mjs before=/work/lib-main after=/work/lib-new
//
// Installs the TypeScript peers into bench/.npm-peers (npm, peers/package.json)
// and builds the floor into bench/.floor/echo (cc) on first use. Every round
// runs every column once, in a rotating order, each in a fresh process:
// check one answer in full, warm up (BENCH_TP_WARMUP pipelined calls), then
// pipelined for BENCH_TP_MS, then sequential for BENCH_TP_MS. Ratios are taken
// within a round, then the median over rounds (BENCH_TP_ROUNDS).
// The driver reads only the id of each answer (and that it is a result);
// the first answer of each process is parsed and checked in full.

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const int = (name, dflt) => Number.parseInt(env[name] || String(dflt), 10);
const ROUNDS = int('BENCH_TP_ROUNDS', 5);
const MS = int('BENCH_TP_MS', 2000);
const WINDOW = int('BENCH_TP_WINDOW', 100);
const WARMUP = int('BENCH_TP_WARMUP', 2000);
const ONLY = (env.BENCH_TP_COLUMNS || '').split(',').filter(Boolean);
const PEERS = env.BENCH_NPM_PEERS || path.join(HERE, '.npm-peers');
const FLOOR = path.join(HERE, '.floor', 'echo');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

// ---------------------------------------------------------------- peers
function installPeers() {
  const want = JSON.parse(fs.readFileSync(path.join(HERE, 'peers', 'package.json'), 'utf8')).dependencies;
  const have = (name) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(PEERS, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      return null;
    }
  };
  if (Object.entries(want).every(([n, v]) => have(n) === v)) return;
  console.error(`# installing ${Object.entries(want).map(([n, v]) => `${n}@${v}`).join(' ')} into ${PEERS}`);
  fs.mkdirSync(PEERS, { recursive: true });
  fs.copyFileSync(path.join(HERE, 'peers', 'package.json'), path.join(PEERS, 'package.json'));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', PEERS], { stdio: ['ignore', 'ignore', 'inherit'] });
}

function buildFloor() {
  const src = path.join(HERE, 'floor', 'echo.c');
  const fresh = fs.existsSync(FLOOR) && fs.statSync(FLOOR).mtimeMs >= fs.statSync(src).mtimeMs;
  if (fresh) return;
  fs.mkdirSync(path.dirname(FLOOR), { recursive: true });
  execFileSync(env.CC || 'cc', ['-O2', '-o', FLOOR, src], { stdio: 'inherit' });
}

// ---------------------------------------------------------------- requests
const MODERN_META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const modernCall = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2},${MODERN_META}}}\n`;
const legacyCall = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}}\n`;
const LEGACY_OPEN = [
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
];

function columns(builds) {
  const cleanEnv = { ...env };
  delete cleanEnv.R_LIBS;
  const cols = builds.map((b) => ({
    key: b.label, label: `mcplite (${b.label})`, ours: true, call: modernCall,
    cmd: 'Rscript', args: ['--vanilla', path.join(HERE, 'servers', 'pkg-add.R')], env: { ...cleanEnv, R_LIBS: b.lib },
  }));
  const peerEnv = { ...cleanEnv, BENCH_NPM_PEERS: PEERS };
  cols.push(
    { key: 'ts-sdk', label: 'TS SDK 1.32 (stdio)', call: legacyCall, open: LEGACY_OPEN, cmd: process.execPath, args: [path.join(HERE, 'peers', 'ts-sdk-add.cjs')], env: peerEnv },
    { key: 'ts-server', label: 'server 2.4 (serveStdio)', call: modernCall, cmd: process.execPath, args: [path.join(HERE, 'peers', 'ts-server-add.cjs')], env: peerEnv },
    { key: 'floor', label: 'C echo floor', call: modernCall, cmd: FLOOR, args: [], env: cleanEnv, floor: true },
    { key: 'floor-batch', label: 'C echo floor, one write per read', call: modernCall, cmd: FLOOR, args: ['--batch'], env: cleanEnv, floor: true },
  );
  return ONLY.length ? cols.filter((c) => ONLY.includes(c.key)) : cols;
}

// ---------------------------------------------------------------- one server
class Conn {
  constructor(col) {
    this.col = col;
    this.proc = spawn(col.cmd, col.args, { env: col.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.rest = '';
    this.stderr = '';
    this.onLine = null;
    this.proc.stdout.setEncoding('utf8');
    this.proc.stdout.on('data', (chunk) => this.data(chunk));
    this.proc.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-2000); });
    this.exited = new Promise((r) => this.proc.on('exit', r));
    this.proc.stdin.on('error', () => {});
  }

  data(chunk) {
    const text = this.rest + chunk;
    let start = 0;
    let nl;
    let n = 0;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      const line = text.slice(start, nl);
      start = nl + 1;
      this.onLine(line);
      n++;
    }
    this.rest = text.slice(start);
    if (n && this.onBatch) this.onBatch(n);
  }

  // The id of an answer line that is a result (throws on anything else).
  idOf(line) {
    const i = line.indexOf('"id":');
    if (i < 0 || !line.includes('"result"')) throw new Error(`${this.col.label}: unexpected line: ${line.slice(0, 300)}\n${this.stderr}`);
    return Number.parseInt(line.slice(i + 5, i + 25), 10);
  }

  // Send one line, wait for its answer line (full parse).
  ask(text) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.col.label}: no answer; stderr:\n${this.stderr}`)), 30000);
      this.onLine = (line) => { clearTimeout(timer); resolve(JSON.parse(line)); };
      this.proc.stdin.write(text.endsWith('\n') ? text : `${text}\n`);
    });
  }

  async open() {
    if (this.col.open) {
      const init = await this.ask(this.col.open[0]);
      if (!init.result) throw new Error(`${this.col.label}: initialize failed: ${JSON.stringify(init)}`);
      this.proc.stdin.write(`${this.col.open[1]}\n`);
    }
    const first = await this.ask(this.col.call(1));
    const text = first.result?.content?.[0]?.text;
    if (first.id !== 1 || text !== '3' || first.result.isError) throw new Error(`${this.col.label}: add answered ${JSON.stringify(first)}`);
    this.nextId = 2;
  }

  // Keep `window` requests in flight until `ms` have passed (sending new
  // requests in one write per batch of answers read), then drain.
  pipelined(ms, window, minCalls = 0) {
    return new Promise((resolve, reject) => {
      const call = this.col.call;
      const seen = new Set();
      let sent = 0;
      let done = 0;
      const t0 = now();
      let last = t0;
      const send = (k) => {
        let s = '';
        for (let j = 0; j < k; j++) {
          seen.add(this.nextId);
          s += call(this.nextId++);
        }
        sent += k;
        this.proc.stdin.write(s);
      };
      const timer = setTimeout(() => reject(new Error(`${this.col.label}: pipelined run stalled; stderr:\n${this.stderr}`)), ms + 60000);
      this.onLine = (line) => {
        const id = this.idOf(line);
        if (!seen.delete(id)) throw new Error(`${this.col.label}: answer for an id not in flight: ${line.slice(0, 200)}`);
        done++;
      };
      this.onBatch = () => {
        last = now();
        if (done === sent && (last - t0 >= ms && done >= minCalls)) {
          clearTimeout(timer);
          this.onBatch = null;
          resolve({ cps: (done / (last - t0)) * 1000, calls: done });
        } else if (last - t0 < ms || sent < minCalls) {
          send(done + window - sent);
        }
      };
      send(window);
    });
  }

  // One request at a time for `ms`.
  sequential(ms) {
    return new Promise((resolve, reject) => {
      const call = this.col.call;
      let done = 0;
      let want = 0;
      const t0 = now();
      const timer = setTimeout(() => reject(new Error(`${this.col.label}: sequential run stalled; stderr:\n${this.stderr}`)), ms + 60000);
      this.onBatch = null;
      this.onLine = (line) => {
        if (this.idOf(line) !== want) throw new Error(`${this.col.label}: answer for the wrong id: ${line.slice(0, 200)}`);
        done++;
        const t = now();
        if (t - t0 >= ms) {
          clearTimeout(timer);
          resolve({ cps: (done / (t - t0)) * 1000, calls: done });
          return;
        }
        want = this.nextId++;
        this.proc.stdin.write(call(want));
      };
      want = this.nextId++;
      this.proc.stdin.write(call(want));
    });
  }

  async close() {
    this.proc.stdin.end();
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 10000);
    await this.exited;
    clearTimeout(t);
  }
}

async function measure(col) {
  const c = new Conn(col);
  try {
    await c.open();
    await c.pipelined(0, WINDOW, WARMUP);
    const pipe = await c.pipelined(MS, WINDOW);
    const seq = await c.sequential(MS);
    return { pipelined: pipe.cps, sequential: seq.cps, calls: pipe.calls + seq.calls };
  } finally {
    await c.close();
  }
}

// ---------------------------------------------------------------- main
async function main() {
  const builds = process.argv.slice(2).map((a) => {
    const i = a.indexOf('=');
    return i > 0 ? { label: a.slice(0, i), lib: a.slice(i + 1) } : { label: path.basename(a), lib: a };
  });
  if (!builds.length) builds.push({ label: 'R_LIBS', lib: env.R_LIBS || '' });
  const cols = columns(builds);
  if (cols.some((c) => c.key.startsWith('ts-'))) installPeers();
  if (cols.some((c) => c.floor)) buildFloor();

  const started = new Date();
  const rounds = [];
  console.error(`# ${started.toISOString()} load ${loadavg()}; ${ROUNDS} rounds, ${MS} ms per run, window ${WINDOW}`);
  for (let r = 0; r < ROUNDS; r++) {
    const order = cols.map((_, k) => cols[(k + r) % cols.length]);
    const round = { load: loadavg(), results: {} };
    for (const col of order) {
      round.results[col.key] = await measure(col);
      const x = round.results[col.key];
      console.error(`round ${r + 1} ${col.label}: pipelined ${x.pipelined.toFixed(0)}/s, sequential ${x.sequential.toFixed(0)}/s`);
    }
    rounds.push(round);
  }
  const ended = new Date();

  const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '–');
  const cell = (xs, d = 0) => `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)})`;
  const per = (key, kind) => rounds.map((rd) => rd.results[key][kind]);
  const ratio = (a, b, kind) => rounds.map((rd) => rd.results[a][kind] / rd.results[b][kind]);
  const out = [];
  out.push(`Run ${started.toISOString()} – ${ended.toISOString()}, ${ROUNDS} rounds, ${MS} ms per run, ${WINDOW} in flight; load average ${rounds.map((r) => r.load.split(' ')[0]).join(', ')} (1-min, at each round's start), ${loadavg()} at the end; ${os.cpus().length} cores, node ${process.version}.`);
  out.push('');
  out.push('Calls/s, median (min–max) over rounds:');
  out.push('');
  out.push('| column | pipelined | sequential |');
  out.push('| --- | ---: | ---: |');
  for (const c of cols) out.push(`| ${c.label} | ${cell(per(c.key, 'pipelined'))} | ${cell(per(c.key, 'sequential'))} |`);
  out.push('');
  const ours = cols.filter((c) => c.ours);
  const peers = cols.filter((c) => !c.ours && !c.floor);
  const floor = cols.find((c) => c.floor);
  const floorBatch = cols.find((c) => c.key === 'floor-batch');
  if (ours.length) {
    out.push('Ratios per round, then median (min–max): "x peer" is mcplite calls/s over the peer\'s (goal ≥ 1.5); "floor cost" is the floor\'s calls/s over mcplite\'s (goal ≤ 2, pipelined).');
    out.push('');
    const heads = [...peers.map((p) => `x ${p.label}`), ...(floor ? ['floor cost'] : []), ...(floorBatch ? ['batch floor cost'] : []), ...(ours.length > 1 ? [`x ${ours[0].label}`] : [])];
    out.push(`| column | kind | ${heads.join(' | ')} |`);
    out.push(`| --- | --- | ${heads.map(() => '---:').join(' | ')} |`);
    for (const o of ours) {
      for (const kind of ['pipelined', 'sequential']) {
        const cells = [...peers.map((p) => cell(ratio(o.key, p.key, kind), 2)), ...(floor ? [cell(ratio(floor.key, o.key, kind), 2)] : []), ...(floorBatch ? [cell(ratio(floorBatch.key, o.key, kind), 2)] : [])];
        if (ours.length > 1) cells.push(cell(ratio(o.key, ours[0].key, kind), 2));
        out.push(`| ${o.label} | ${kind} | ${cells.join(' | ')} |`);
      }
    }
  }
  const md = out.join('\n');
  console.log(md);
  const dir = path.join(HERE, 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'throughput-latest.md'), `${md}\n`);
  fs.writeFileSync(path.join(dir, 'throughput-latest.json'), JSON.stringify({ started, ended, ROUNDS, MS, WINDOW, builds, rounds }, null, 1));
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
