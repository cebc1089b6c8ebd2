#!/usr/bin/env node
// Benchmark of mcp_server(workers = ): the same server script
// (servers/workers.R) run side by side with workers = 0 (every call in the
// server process, one after another) and with mirai workers. Plain node
// (>= 18), no npm modules. Run: node bench/workers.mjs (see bench/README.md).
//
// Every timing starts after the server's first answer (a server/discover)
// and, with workers, their line saying they are ready, so neither R's
// start-up nor the daemons' is counted (the start scenario measures those).
// Repetitions are
// interleaved (rep 1: workers = 0, then workers = n; rep 2: ...) and ratios
// are taken per repetition before the median. The load average is recorded
// around every measurement: on a shared machine it says how much to trust it.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'servers', 'workers.R');
const env = process.env;
const int = (name, dflt) => (env[name] ? Number.parseInt(env[name], 10) : dflt);
const num = (name, dflt) => (env[name] ? Number.parseFloat(env[name]) : dflt);
const P = {
  reps: int('BENCH_REPS', 3),
  sleepCalls: int('BENCH_SLEEP_CALLS', 16),
  sleepSeconds: num('BENCH_SLEEP_S', 0.5),
  sleepWorkers: int('BENCH_SLEEP_WORKERS', 4),
  cpuCalls: int('BENCH_CPU_CALLS', 8),
  cpuSteps: int('BENCH_CPU_STEPS', 5000000),
  cpuWorkers: int('BENCH_CPU_WORKERS', 2),
  latency: int('BENCH_LATENCY_CALLS', 300),
  throughputMs: int('BENCH_THROUGHPUT_MS', 2000),
  window: int('BENCH_WINDOW', 64),
  overheadWorkers: int('BENCH_OVERHEAD_WORKERS', 4),
  idleSeconds: num('BENCH_IDLE_S', 10),
  inflight: (env.BENCH_INFLIGHT || '10,100,1000,4000').split(',').map(Number),
  pings: int('BENCH_PINGS', 200),
  queueCalls: (env.BENCH_QUEUE_CALLS || '1500,6000').split(',').map(Number),
  queueKb: int('BENCH_QUEUE_KB', 100),
  hopWorkers: (env.BENCH_HOP_WORKERS || '1,2,4').split(',').map(Number),
};
const only = (env.BENCH_WORKER_SCENARIOS || 'sleep,cpu,overhead,idle,inflight,queue,hop,start').split(',');
const outDir = env.BENCH_OUT || path.join(HERE, 'results');

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const call = (name, args) => (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args},${META}}}`;
const ping = (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
const cancel = (id) => `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`;
const initialize = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`;
const discover = (id) => `{"jsonrpc":"2.0","id":${id},"method":"server/discover","params":{${META}}}`;

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const quantile = (xs, q) => {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const load = () => os.loadavg()[0];

class Server {
  constructor(workers) {
    this.workers = workers;
    this.pending = new Map();
    this.nextId = 1;
    this.stderr = '';
  }
  start() {
    const childEnv = { ...env, BENCH_WORKERS: String(this.workers) };
    for (const k of Object.keys(childEnv)) if (k.startsWith('OTEL_')) delete childEnv[k];
    if (env.MCPLITE_LIB) childEnv.R_LIBS = env.MCPLITE_LIB;
    this.proc = spawn('Rscript', ['--vanilla', SCRIPT], { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((r) => this.proc.on('close', (code) => r(code)));
    this.proc.stdin.on('error', () => {});
    let carry = '';
    this.proc.stdout.on('data', (buf) => {
      const text = carry + buf.toString('utf8');
      const lines = text.split('\n');
      carry = lines.pop();
      const t = now();
      for (const l of lines) {
        const id = JSON.parse(l).id;
        const p = this.pending.get(id);
        if (!p) throw new Error(`answer for unknown id ${id}: ${l.slice(0, 200)}`);
        this.pending.delete(id);
        p.resolve({ text: l, t, sent: p.sent });
      }
    });
    this.proc.stderr.on('data', (b) => (this.stderr = (this.stderr + b.toString('utf8')).slice(-5000)));
    this.proc.on('close', (code) => {
      for (const [, p] of this.pending) p.reject(new Error(`server exited (${code}); stderr:\n${this.stderr}`));
    });
    return this;
  }
  // Write lines without awaiting answers (a burst); returns the ids.
  send(make, n) {
    const ids = [];
    let chunk = '';
    for (let k = 0; k < n; k++) {
      const id = this.nextId++;
      ids.push(id);
      this.pending.set(id, { resolve: () => {}, reject: () => {}, sent: now() });
      chunk += make(id) + '\n';
      if (chunk.length > 1 << 20) {
        this.proc.stdin.write(chunk);
        chunk = '';
      }
    }
    if (chunk) this.proc.stdin.write(chunk);
    return ids;
  }
  request(make) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const sent = now();
      this.pending.set(id, { resolve, reject, sent });
      this.proc.stdin.write(make(id) + '\n');
    });
  }
  // Answered, and with workers, they have evaluated the script (the server
  // answers before they have, and says on stderr when they are ready).
  async ready() {
    const r = await this.request(discover);
    if (!JSON.parse(r.text).result) throw new Error(`server/discover failed: ${r.text}`);
    // Its starting line was written before the answer, but may still be in
    // the pipe; a server from before issue 41 writes none (it answers once
    // its workers are ready).
    if (this.workers === 0) return;
    for (let k = 0; k < 20 && !this.stderr.includes('mcplite: starting '); k++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    if (!this.stderr.includes('mcplite: starting ')) return;
    while (!this.stderr.includes('mcplite: workers ready')) {
      if (this.stderr.includes('mcplite: a worker could not define the tools')) throw new Error(this.stderr);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  async close() {
    this.proc.stdin.end();
    return this.exited;
  }
}

function check(r, want) {
  const msg = JSON.parse(r.text);
  const text = msg.result?.content?.[0]?.text;
  if (msg.result?.isError || (want !== undefined && text !== want)) throw new Error(`unexpected answer: ${r.text.slice(0, 300)}`);
}

// All `n` calls written at once; wall time from the first write to the last answer.
async function burst(workers, n, make, want) {
  const srv = new Server(workers).start();
  try {
    await srv.ready();
    const load0 = load();
    const t0 = now();
    const answers = await Promise.all(Array.from({ length: n }, () => srv.request(make)));
    const wall = Math.max(...answers.map((a) => a.t)) - t0;
    for (const a of answers) check(a, want);
    return { wall, load: [load0, load()] };
  } finally {
    await srv.close();
  }
}

async function overhead(workers) {
  const srv = new Server(workers).start();
  try {
    await srv.ready();
    const add = (id) => call('add', `{"x":${id},"y":1}`)(id);
    for (let k = 0; k < 20; k++) check(await srv.request(add));
    const load0 = load();
    const lat = [];
    for (let k = 0; k < P.latency; k++) {
      const r = await srv.request(add);
      check(r, String(JSON.parse(r.text).id + 1));
      lat.push(r.t - r.sent);
    }
    // Throughput: `window` requests in flight for throughputMs.
    let done = 0;
    let last = 0;
    const t0 = now();
    await new Promise((resolve, reject) => {
      let sent = 0;
      const one = () => {
        sent++;
        srv.request(add).then((r) => {
          done++;
          last = r.t;
          if (now() - t0 < P.throughputMs) one();
          else if (done === sent) resolve();
        }, reject);
      };
      for (let k = 0; k < P.window; k++) one();
    });
    return { p50: median(lat), p99: quantile(lat, 0.99), cps: (done / (last - t0)) * 1000, load: [load0, load()] };
  } finally {
    await srv.close();
  }
}

// From spawning the server to the answer of `initialize` (written at once),
// ms: what starting `workers` daemons adds before a client is served.
async function startup(workers) {
  const load0 = load();
  const srv = new Server(workers);
  const t0 = now();
  srv.start();
  try {
    const r = await srv.request(initialize);
    if (!JSON.parse(r.text).result) throw new Error(`initialize failed: ${r.text}`);
    return { ms: r.t - t0, load: [load0, load()] };
  } finally {
    await srv.close();
  }
}

// CPU seconds the server process has used (utime + stime in /proc/PID/stat;
// Rscript execs R, so the pid is the server's). null where there is no /proc.
function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

// The server's CPU over `idleSeconds`, as % of one core: with nothing to do,
// and while one long call runs on a worker (what the server spends watching).
async function idle(workers) {
  const srv = new Server(workers).start();
  try {
    await srv.ready();
    const pid = srv.proc.pid;
    const over = async () => {
      const c0 = cpuSeconds(pid);
      const t0 = now();
      await new Promise((r) => setTimeout(r, P.idleSeconds * 1000));
      const c1 = cpuSeconds(pid);
      return c0 === null || c1 === null ? NaN : ((c1 - c0) / ((now() - t0) / 1000)) * 100;
    };
    const load0 = load();
    const quiet = await over();
    const long = srv.request(call('nap', `{"seconds":${P.idleSeconds + 2}}`));
    await new Promise((r) => setTimeout(r, 500));
    const watching = await over();
    check(await long, 'slept');
    return { quiet, watching, load: [load0, load()] };
  } finally {
    await srv.close();
  }
}

// Median time of a ping answered while `n` calls are in flight (2 workers
// busy, the rest queued): what each message costs as the number grows.
async function inflight(n) {
  const srv = new Server(2).start();
  try {
    await srv.ready();
    const ids = srv.send(call('nap', '{"seconds":3600}'), n);
    for (let k = 0; k < Math.min(20, P.pings); k++) await srv.request(ping);
    const load0 = load();
    const lat = [];
    for (let k = 0; k < P.pings; k++) {
      const r = await srv.request(ping);
      lat.push(r.t - r.sent);
    }
    for (const id of ids) srv.pending.delete(id);
    srv.proc.stdin.write(ids.map(cancel).join('\n') + '\n');
    return { p50: median(lat), load: [load0, load()] };
  } finally {
    await srv.close();
  }
}

// The server's resident memory (VmRSS, MB), or NaN where there is no /proc.
function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

// `n` calls carrying `queueKb` kB of arguments each, written at once while
// the one worker sleeps: how much the server grows holding them. Writing
// stops where the server stops reading (its queue is full).
async function queued(n) {
  const srv = new Server(1).start();
  try {
    await srv.ready();
    const pid = srv.proc.pid;
    const before = rssMb(pid);
    const blocker = srv.send(call('nap', '{"seconds":3600}'), 1);
    const pad = 'x'.repeat(P.queueKb * 1024);
    const ids = [];
    let written = 0;
    let stalled = false;
    for (let k = 0; k < n; k++) {
      const id = srv.nextId++;
      ids.push(id);
      srv.pending.set(id, { resolve: () => {}, reject: () => {}, sent: now() });
      const ok = srv.proc.stdin.write(call('carry', `{"pad":"${pad}"}`)(id) + '\n');
      written++;
      if (!ok) {
        // Wait for the pipe to drain, at most 2 s: if it does not, the
        // server has stopped reading.
        const drained = await Promise.race([
          new Promise((r) => srv.proc.stdin.once('drain', () => r(true))),
          new Promise((r) => setTimeout(() => r(false), 2000)),
        ]);
        if (!drained) {
          stalled = true;
          break;
        }
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
    const after = rssMb(pid);
    for (const id of [...blocker, ...ids]) srv.pending.delete(id);
    srv.proc.kill('SIGKILL');
    return { grew: after - before, written, stalled };
  } finally {
    await srv.exited;
  }
}

const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const range = (xs, d = 2) => `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)})`;

async function main() {
  const started = new Date();
  const results = { started: started.toISOString(), params: P, host: { cpus: os.cpus().length, model: os.cpus()[0]?.model }, rows: {} };
  const rows = [];
  const loads = [];
  if (only.includes('sleep')) {
    const base = [], par = [], ratio = [];
    for (let rep = 0; rep < P.reps; rep++) {
      const a = await burst(0, P.sleepCalls, call('nap', `{"seconds":${P.sleepSeconds}}`), 'slept');
      const b = await burst(P.sleepWorkers, P.sleepCalls, call('nap', `{"seconds":${P.sleepSeconds}}`), 'slept');
      base.push(a.wall / 1000); par.push(b.wall / 1000); ratio.push(a.wall / b.wall);
      loads.push(...a.load, ...b.load);
      console.error(`# sleep rep ${rep + 1}: workers=0 ${fmt(a.wall / 1000)} s, workers=${P.sleepWorkers} ${fmt(b.wall / 1000)} s`);
    }
    results.rows.sleep = { base, par, ratio };
    rows.push([`${P.sleepCalls} calls of a tool sleeping ${P.sleepSeconds} s, sent at once; wall s`, range(base), `${range(par)} (${P.sleepWorkers} workers)`, `${range(ratio)}×`, '≥ 3.5×', median(ratio) >= 3.5 ? 'met' : 'not met']);
  }
  if (only.includes('cpu')) {
    const base = [], par = [], ratio = [];
    for (let rep = 0; rep < P.reps; rep++) {
      const a = await burst(0, P.cpuCalls, call('spin', `{"n":${P.cpuSteps}}`));
      const b = await burst(P.cpuWorkers, P.cpuCalls, call('spin', `{"n":${P.cpuSteps}}`));
      base.push(a.wall / 1000); par.push(b.wall / 1000); ratio.push(a.wall / b.wall);
      loads.push(...a.load, ...b.load);
      console.error(`# cpu rep ${rep + 1}: workers=0 ${fmt(a.wall / 1000)} s, workers=${P.cpuWorkers} ${fmt(b.wall / 1000)} s`);
    }
    results.rows.cpu = { base, par, ratio };
    rows.push([`${P.cpuCalls} calls of a CPU-bound tool (${P.cpuSteps} loop steps in R), sent at once; wall s`, range(base), `${range(par)} (${P.cpuWorkers} workers)`, `${range(ratio)}×`, '≥ 1.6×', median(ratio) >= 1.6 ? 'met' : 'not met']);
  }
  if (only.includes('overhead')) {
    const b50 = [], w50 = [], b99 = [], w99 = [], bc = [], wc = [], extra = [];
    for (let rep = 0; rep < P.reps; rep++) {
      const a = await overhead(0);
      const b = await overhead(P.overheadWorkers);
      b50.push(a.p50); w50.push(b.p50); b99.push(a.p99); w99.push(b.p99); bc.push(a.cps); wc.push(b.cps);
      extra.push(b.p50 - a.p50);
      loads.push(...a.load, ...b.load);
      console.error(`# overhead rep ${rep + 1}: p50 ${fmt(a.p50, 3)} vs ${fmt(b.p50, 3)} ms, ${fmt(a.cps, 0)} vs ${fmt(b.cps, 0)} calls/s`);
    }
    results.rows.overhead = { b50, w50, b99, w99, bc, wc, extra };
    rows.push(['trivial tool (x + y), one call at a time: median latency ms', range(b50, 3), `${range(w50, 3)} (${P.overheadWorkers} workers)`, `+${range(extra, 3)} ms per call`, 'reported', '–']);
    rows.push(['trivial tool, one call at a time: p99 latency ms', range(b99, 3), range(w99, 3), '', 'reported', '–']);
    rows.push([`trivial tool, ${P.window} calls in flight: calls/s`, range(bc, 0), range(wc, 0), '', 'reported', '–']);
  }
  if (only.includes('hop')) {
    // Issue 41, goal 2: per-call latency (sequential) and pipelined
    // throughput, in-process against 1, 2 and 4 workers, interleaved.
    const per = { 0: [] };
    for (const n of P.hopWorkers) per[n] = [];
    for (let rep = 0; rep < P.reps; rep++) {
      for (const n of [0, ...P.hopWorkers]) {
        const a = await overhead(n);
        per[n].push(a);
        loads.push(...a.load);
        console.error(`# hop rep ${rep + 1}: workers=${n} p50 ${fmt(a.p50, 3)} ms, ${fmt(a.cps, 0)} calls/s`);
      }
    }
    results.rows.hop = per;
    for (const n of P.hopWorkers) {
      const extra = per[n].map((a, i) => a.p50 - per[0][i].p50);
      const rate = per[n].map((a, i) => a.cps / per[0][i].cps);
      rows.push([`trivial tool, one call at a time, ${n} worker${n > 1 ? 's' : ''}: median ms`, range(per[0].map((a) => a.p50), 3), range(per[n].map((a) => a.p50), 3), `+${range(extra, 3)} ms per call`, '≤ +0.25 ms', median(extra) <= 0.25 ? 'met' : 'not met']);
      rows.push([`trivial tool, ${P.window} calls in flight, ${n} worker${n > 1 ? 's' : ''}: calls/s`, range(per[0].map((a) => a.cps), 0), range(per[n].map((a) => a.cps), 0), `${range(rate)}× in-process`, '≥ 0.5×', median(rate) >= 0.5 ? 'met' : 'not met']);
    }
  }
  if (only.includes('start')) {
    const per = { 0: [] };
    for (const n of P.hopWorkers) per[n] = [];
    for (let rep = 0; rep < P.reps; rep++) {
      for (const n of [0, ...P.hopWorkers]) {
        const a = await startup(n);
        per[n].push(a.ms);
        loads.push(...a.load);
        console.error(`# start rep ${rep + 1}: workers=${n} initialize answered after ${fmt(a.ms, 0)} ms`);
      }
    }
    results.rows.start = per;
    for (const n of P.hopWorkers) {
      const extra = per[n].map((x, i) => (x - per[0][i]) / 1000);
      rows.push([`spawn to the initialize answer, ${n} worker${n > 1 ? 's' : ''}: s`, range(per[0].map((x) => x / 1000)), range(per[n].map((x) => x / 1000)), `+${range(extra)} s`, '≤ +0.3 s', median(extra) <= 0.3 ? 'met' : 'not met']);
    }
  }
  if (only.includes('idle')) {
    const quiet = [], watching = [];
    for (let rep = 0; rep < P.reps; rep++) {
      const a = await idle(P.overheadWorkers);
      quiet.push(a.quiet); watching.push(a.watching);
      loads.push(...a.load);
      console.error(`# idle rep ${rep + 1}: ${fmt(a.quiet, 2)} % of a core idle, ${fmt(a.watching, 2)} % while one call runs`);
    }
    results.rows.idle = { quiet, watching };
    rows.push([`server CPU over ${P.idleSeconds} s with ${P.overheadWorkers} workers and no call: % of a core`, '–', range(quiet, 2), '', '< 1 %', median(quiet) < 1 ? 'met' : 'not met']);
    rows.push([`server CPU over ${P.idleSeconds} s while one long call runs on a worker: % of a core`, '–', range(watching, 2), '', '< 1 %', median(watching) < 1 ? 'met' : 'not met']);
  }
  if (only.includes('inflight')) {
    const per = {};
    for (const n of P.inflight) per[n] = [];
    for (let rep = 0; rep < P.reps; rep++) {
      for (const n of P.inflight) {
        const a = await inflight(n);
        per[n].push(a.p50);
        loads.push(...a.load);
        console.error(`# inflight rep ${rep + 1}: ${n} calls in flight, ping p50 ${fmt(a.p50, 3)} ms`);
      }
    }
    results.rows.inflight = per;
    const base = per[P.inflight[0]];
    for (const n of P.inflight) {
      const ratio = per[n].map((x, i) => x / base[i]);
      const target = n === P.inflight[0] ? 'reference' : '≤ 1.5×';
      const status = n === P.inflight[0] ? '–' : median(ratio) <= 1.5 ? 'met' : 'not met';
      rows.push([`ping while ${n} calls are in flight (2 workers busy, the rest queued): median ms`, '–', range(per[n], 3), `${range(ratio)}× the ${P.inflight[0]}-call median`, target, status]);
    }
  }
  if (only.includes('queue')) {
    for (const n of P.queueCalls) {
      const a = await queued(n);
      results.rows[`queue${n}`] = a;
      console.error(`# queue: ${n} calls of ${P.queueKb} kB: wrote ${a.written}, server grew ${fmt(a.grew, 0)} MB${a.stalled ? ', then stopped reading' : ''}`);
      rows.push([`${n} calls of ${P.queueKb} kB written while the one worker is busy: server growth MB`, '–', `${fmt(a.grew, 0)} (${a.written} written${a.stalled ? '; the server then stopped reading' : ''})`, '', 'bounded', '–']);
    }
  }
  results.load = { min: Math.min(...loads), max: Math.max(...loads) };
  results.seconds = (Date.now() - started.getTime()) / 1000;
  const table = [
    `Run ${results.started}, ${fmt(results.seconds, 0)} s; ${results.host.cpus} CPUs (${results.host.model}); 1-minute load average during the measurements: ${fmt(results.load.min)}–${fmt(results.load.max)}.`,
    `Cells: median (min–max) over ${P.reps} interleaved repetitions; ratios per repetition, then median.`,
    '',
    '| Scenario | workers = 0 | with workers | speed-up | Target | Status |',
    '| --- | ---: | ---: | ---: | --- | --- |',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  console.log(table);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'workers-latest.md'), table + '\n');
  fs.writeFileSync(path.join(outDir, 'workers-latest.json'), JSON.stringify(results, null, 2) + '\n');
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
