#!/usr/bin/env node
// Memory benchmark (issue 41, goal 4): the peak resident memory of a server
// answering BENCH_MEM_CALLS (5,000) calls, mcplite against the CRAN release,
// measured together. Plain node (>= 18), no npm modules, Linux only (reads
// /proc). Run: node bench/memory.mjs (see bench/README.md, "Memory").
//
// Both columns run the same script; only R_LIBS differs, and the server's
// serverInfo version is checked. Two scenarios (BENCH_MEM_SCENARIOS):
// "mix", servers/memory.R (a number, a 10-row data frame as structured
// content, a text; the calls cycle through the three), and "add",
// servers/pkg-add.R (scenario 1's `x + y`, every call). The
// figures are read from /proc/PID/status after the server's first answer
// (VmRSS, "start") and after the last call's answer, before stdin is closed
// (VmHWM, the peak over the whole life of the process, and VmRSS). Rounds
// alternate the order of the columns; cells are medians over rounds. The
// 1-minute load average is recorded around each run. With workers
// (ours only: the CRAN release has none) the figures are summed over the
// server and every process it started (mirai's daemons), found by a variable
// in their environment.
//
// Baselines, in the same rounds: `Rscript --vanilla -e` with
// `invisible(readLines(file("stdin")))` alone and after `library(mcplite)`
// of each column's library. BENCH_MEM_SMAPS=1 (default) also attributes the
// server's memory by mapping at the end of the last round (/proc/PID/smaps).

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const int = (name, dflt) => (env[name] ? Number.parseInt(env[name], 10) : dflt);
const P = {
  reps: int('BENCH_REPS', 5),
  calls: int('BENCH_MEM_CALLS', 5000),
  window: int('BENCH_MEM_WINDOW', 1),
  workers: int('BENCH_MEM_WORKERS', 2),
  smaps: env.BENCH_MEM_SMAPS !== '0',
};
const outDir = env.BENCH_OUT || path.join(HERE, 'results');
const cranLib = env.BENCH_CRAN_LIB || path.join(HERE, '.lib-cran');

const COLUMNS = [
  { key: 'ours', lib: env.MCPLITE_LIB || env.R_LIBS || '' },
  { key: 'cran', lib: cranLib },
];

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const call = (name, args) => (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args},${META}}}`;
const discover = (id) => `{"jsonrpc":"2.0","id":${id},"method":"server/discover","params":{${META}}}`;
// The calls: `check` says whether an answer is right. A scenario's call k is
// its calls[k % n].
const CALLS = [
  { make: (k) => call('add', `{"x":${k},"y":0.5}`), check: (r, k) => r.content?.[0]?.text === String(k + 0.5) },
  { make: () => call('frame', '{}'), check: (r) => Array.isArray(r.structuredContent) && r.structuredContent.length === 10 },
  { make: (k) => call('text', `{"n":${(k % 50) + 1}}`), check: (r, k) => r.content?.[0]?.text?.split(' ').length === (k % 50) + 1 },
];
const SCENARIOS = {
  mix: { script: path.join(HERE, 'servers', 'memory.R'), calls: CALLS, label: 'add, a 10-row frame, a text, in turn' },
  add: { script: path.join(HERE, 'servers', 'pkg-add.R'), calls: [CALLS[0]], label: '`x + y` only (scenario 1 server)' },
};
const scenarios = (env.BENCH_MEM_SCENARIOS || 'mix,add').split(',');

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs.filter(Number.isFinite));
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const load = () => os.loadavg()[0];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function childEnv(lib, extra = {}) {
  const e = { ...env, ...extra };
  for (const k of Object.keys(e)) if (k.startsWith('OTEL_')) delete e[k];
  if (lib) e.R_LIBS = lib;
  else delete e.R_LIBS;
  return e;
}

// ------------------------------------------------------------------ /proc
// kB figures of /proc/PID/status, or null once the process is gone.
function status(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number((new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text) || [])[1] ?? NaN);
    const threads = Number((/^Threads:\s+(\d+)/m.exec(text) || [])[1] ?? NaN);
    return { rss: kb('VmRSS'), hwm: kb('VmHWM'), threads };
  } catch {
    return null;
  }
}

// The processes whose environment holds `tag` (BENCH_MEM_TAG): the server
// and every process it started, which inherit its environment (mirai's
// daemons are not its children: they are started through a shell that exits).
function tagged(tag) {
  const needle = `BENCH_MEM_TAG=${tag}\0`;
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/environ`, 'latin1').includes(needle)) out.push(Number(d));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

// The figures of the server's processes, summed.
function statusTree(tag) {
  const sum = { rss: 0, hwm: 0, threads: 0, processes: 0 };
  for (const p of tagged(tag)) {
    const s = status(p);
    if (!s) continue;
    sum.rss += s.rss;
    sum.hwm += s.hwm;
    sum.threads += s.threads;
    sum.processes++;
  }
  return sum;
}

// The process's mappings by kind (kB of Rss, Private_Dirty), from
// /proc/PID/smaps. glibc's per-thread malloc arenas are anonymous heaps it
// aligns to their 64 MB maximum; thread stacks sit right above a guard page.
function smaps(pid) {
  const text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const maps = [];
  let cur = null;
  for (const l of text.split('\n')) {
    const h = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(l);
    if (h) {
      cur = { start: BigInt(`0x${h[1]}`), end: BigInt(`0x${h[2]}`), perms: h[3], path: h[4], rss: 0, dirty: 0 };
      maps.push(cur);
      continue;
    }
    const f = /^(\w+):\s+(\d+) kB/.exec(l);
    if (f && cur) {
      if (f[1] === 'Rss') cur.rss = Number(f[2]);
      if (f[1] === 'Private_Dirty') cur.dirty = Number(f[2]);
    }
  }
  const ARENA_ALIGN = 64n << 20n;
  const kinds = new Map();
  const add = (kind, m) => {
    const k = kinds.get(kind) || { rss: 0, dirty: 0, count: 0 };
    k.rss += m.rss;
    k.dirty += m.dirty;
    k.count++;
    kinds.set(kind, k);
  };
  maps.forEach((m, i) => {
    const prev = maps[i - 1];
    if (m.path.endsWith('mcplite.so')) add(m.perms.includes('x') ? 'mcplite.so code' : 'mcplite.so data', m);
    else if (/libR\.so/.test(m.path)) add('libR.so', m);
    else if (m.path.includes('.so')) add('other shared libraries', m);
    else if (m.path === '[heap]') add('brk heap (main arena: R objects, main thread malloc)', m);
    else if (m.path === '[stack]') add('main thread stack', m);
    else if (m.path.startsWith('[')) add(`${m.path}`, m);
    else if (m.path) add('other files (locale archive, ...)', m);
    else if (m.perms === '---p') add('guard / reserved (no memory)', m);
    else if (m.start % ARENA_ALIGN === 0n && maps[i + 1]?.perms === '---p' && maps[i + 1].start === m.end)
      add('malloc arenas of other threads', m);
    else if (prev && prev.perms === '---p' && prev.end === m.start && prev.end - prev.start === 4096n)
      add('thread stacks', m);
    else add('anonymous (large R vectors, mmap-ed malloc)', m);
  });
  return Object.fromEntries([...kinds].sort((a, b) => b[1].rss - a[1].rss));
}

function threadNames(pid) {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .map((t) => fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim());
  } catch {
    return [];
  }
}

// ------------------------------------------------------------------ servers
class Server {
  static started = 0;
  constructor(col, script, workers) {
    this.col = col;
    this.script = script;
    this.workers = workers;
    this.pending = new Map();
    this.nextId = 1;
    this.stderr = '';
  }
  start() {
    this.tag = `${process.pid}-${++Server.started}`;
    const e = childEnv(this.col.lib, { BENCH_WORKERS: String(this.workers), BENCH_MEM_TAG: this.tag });
    this.proc = spawn('Rscript', ['--vanilla', this.script], { env: e, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((r) => this.proc.on('close', (code) => r(code)));
    this.proc.stdin.on('error', () => {});
    let carry = '';
    this.proc.stdout.on('data', (buf) => {
      const lines = (carry + buf.toString('utf8')).split('\n');
      carry = lines.pop();
      for (const l of lines) {
        const msg = JSON.parse(l);
        const p = this.pending.get(msg.id);
        if (!p) throw new Error(`answer for unknown id ${msg.id}: ${l.slice(0, 200)}`);
        this.pending.delete(msg.id);
        p.resolve(msg);
      }
    });
    this.proc.stderr.on('data', (b) => (this.stderr = (this.stderr + b.toString('utf8')).slice(-5000)));
    this.proc.on('close', (code) => {
      for (const [, p] of this.pending) p.reject(new Error(`server exited (${code}); stderr:\n${this.stderr}`));
    });
    return this;
  }
  request(make) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.proc.stdin.write(make(id) + '\n');
    });
  }
  async close() {
    this.proc.stdin.end();
    return this.exited;
  }
}

// `n` calls of the scenario's, `window` in flight, every answer checked.
async function drive(srv, scenario, n, window) {
  let next = 0;
  const one = async () => {
    while (next < n) {
      const k = next++;
      const kind = scenario.calls[k % scenario.calls.length];
      const msg = await srv.request(kind.make(k));
      if (!msg.result || msg.result.isError || !kind.check(msg.result, k))
        throw new Error(`call ${k}: unexpected answer ${JSON.stringify(msg).slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: window }, one));
}

async function serverRun(scenario, col, workers, attribute) {
  const srv = new Server(col, scenario.script, workers).start();
  try {
    const load0 = load();
    const first = await srv.request(discover);
    const info = first.result?._meta?.['io.modelcontextprotocol/serverInfo'];
    if (!first.result) throw new Error(`server/discover failed: ${JSON.stringify(first)}`);
    if (info && info.version !== col.version) throw new Error(`${col.key} reports serverInfo version ${info.version}`);
    const pid = srv.proc.pid;
    const start = statusTree(srv.tag);
    await drive(srv, scenario, P.calls, P.window);
    const end = statusTree(srv.tag);
    const out = {
      startRss: start.rss / 1024,
      hwm: end.hwm / 1024,
      endRss: end.rss / 1024,
      threads: end.threads,
      processes: end.processes,
      load: [load0, load()],
    };
    if (attribute) {
      out.smaps = smaps(pid);
      out.threadNames = threadNames(pid);
    }
    return out;
  } finally {
    await srv.close();
  }
}

// `Rscript --vanilla -e` of `expr` then a wait on stdin: its memory once it waits.
async function baseline(lib, expr) {
  const code = `${expr}; cat("ready\\n"); invisible(readLines(file("stdin")))`;
  const proc = spawn('Rscript', ['--vanilla', '-e', code], { env: childEnv(lib), stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise((r) => proc.on('close', r));
  let err = '';
  proc.stderr.on('data', (b) => (err += b));
  await new Promise((resolve, reject) => {
    proc.stdout.on('data', (b) => (String(b).includes('ready') ? resolve() : null));
    proc.on('close', (c) => reject(new Error(`baseline ${expr} exited (${c}): ${err}`)));
  });
  // readLines() is entered right after the line; let it block.
  await sleep(200);
  const s = status(proc.pid);
  const out = { rss: s.rss / 1024, hwm: s.hwm / 1024, smaps: P.smaps ? smaps(proc.pid) : null };
  proc.stdin.end();
  await exited;
  return out;
}

function version(lib) {
  try {
    return execFileSync('Rscript', ['--vanilla', '-e', 'cat(as.character(packageVersion("mcplite")), find.package("mcplite"))'], {
      env: childEnv(lib),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).split(' ');
  } catch {
    return [null, null];
  }
}

// ------------------------------------------------------------------ main
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const cell = (xs, d = 1) => `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)})`;

async function main() {
  const started = new Date();
  for (const col of COLUMNS) {
    [col.version, col.path] = version(col.lib);
    if (!col.version) throw new Error(`mcplite is not installed in ${col.lib || "R's default libraries"}`);
  }
  if (COLUMNS[0].path === COLUMNS[1].path) throw new Error('both columns resolve to the same mcplite: set MCPLITE_LIB');
  COLUMNS[0].label = `mcplite ${COLUMNS[0].version}`;
  COLUMNS[1].label = `mcplite ${COLUMNS[1].version} (CRAN)`;

  const R = { bare: [], libOurs: [], libCran: [] };
  for (const sc of scenarios) R[sc] = { ours: [], cran: [], workers: [] };
  for (let rep = 0; rep < P.reps; rep++) {
    const last = rep === P.reps - 1;
    const order = rep % 2 ? [COLUMNS[1], COLUMNS[0]] : COLUMNS;
    for (const sc of scenarios) {
      for (const col of order) {
        R[sc][col.key].push(await serverRun(SCENARIOS[sc], col, 0, last && P.smaps));
        console.error(`# round ${rep + 1}, ${sc}: ${col.label}: peak ${fmt(R[sc][col.key].at(-1).hwm)} MB`);
      }
      if (P.workers > 0 && sc === 'mix') {
        R[sc].workers.push(await serverRun(SCENARIOS[sc], COLUMNS[0], P.workers, false));
        console.error(`# round ${rep + 1}, ${sc}: ${COLUMNS[0].label}, workers = ${P.workers}: peak ${fmt(R[sc].workers.at(-1).hwm)} MB (sum)`);
      }
    }
    R.bare.push(await baseline(COLUMNS[0].lib, 'NULL'));
    R.libOurs.push(await baseline(COLUMNS[0].lib, 'library(mcplite)'));
    R.libCran.push(await baseline(COLUMNS[1].lib, 'library(mcplite)'));
  }

  const rows = [];
  const loads = (runs) => `${fmt(Math.min(...runs.flatMap((r) => r.load)), 2)}–${fmt(Math.max(...runs.flatMap((r) => r.load)), 2)}`;
  const runRow = (label, runs) =>
    rows.push(
      `| ${label} | ${cell(runs.map((r) => r.startRss))} | ${cell(runs.map((r) => r.hwm))} | ${cell(runs.map((r) => r.endRss))} | ${median(runs.map((r) => r.threads))} | ${loads(runs)} |`,
    );
  const ratios = [];
  for (const sc of scenarios) {
    runRow(`${sc}: ${COLUMNS[0].label}`, R[sc].ours);
    runRow(`${sc}: ${COLUMNS[1].label}`, R[sc].cran);
    if (R[sc].workers.length)
      runRow(`${sc}: ${COLUMNS[0].label}, workers = ${P.workers} (sum of ${median(R[sc].workers.map((r) => r.processes))} processes)`, R[sc].workers);
    const ratio = R[sc].ours.map((r, i) => r.hwm / R[sc].cran[i].hwm);
    const diff = R[sc].ours.map((r, i) => r.hwm - R[sc].cran[i].hwm);
    ratios.push(`${sc} (${SCENARIOS[sc].label}): peak ours ÷ CRAN ${cell(ratio, 3)}, ours − CRAN ${cell(diff)} MB (paired per round).`);
  }
  const baseRow = (label, runs) => rows.push(`| ${label} | ${cell(runs.map((r) => r.rss))} | ${cell(runs.map((r) => r.hwm))} | | | |`);
  baseRow('`Rscript -e` waiting on stdin (no package)', R.bare);
  baseRow(`the same after \`library(mcplite)\`, ${COLUMNS[0].label}`, R.libOurs);
  baseRow(`the same after \`library(mcplite)\`, ${COLUMNS[1].label}`, R.libCran);
  const main = R[scenarios[0]];

  const lines = [
    `Run: ${started.toISOString()}, ${P.reps} rounds (columns alternating), ${P.calls} calls per server, ${P.window} in flight; scenarios: ${scenarios.map((sc) => `${sc} (${SCENARIOS[sc].label})`).join(', ')}.`,
    '',
    'MB; cells: median (min–max) over rounds. "start": VmRSS after the first answer; "peak": VmHWM after the last answer; "end": VmRSS then. Baselines: VmRSS and VmHWM once R waits on stdin.',
    '',
    '| Server | start (VmRSS) | peak (VmHWM) | end (VmRSS) | threads | load average (1 min) |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
    ...ratios,
  ];
  if (P.smaps) {
    const kinds = (s) => (s ? Object.keys(s) : []);
    const all = [
      ...new Set([
        ...kinds(main.ours.at(-1).smaps),
        ...kinds(main.cran.at(-1).smaps),
        ...kinds(R.bare.at(-1).smaps),
        ...kinds(R.libOurs.at(-1).smaps),
      ]),
    ];
    const v = (s, k) => (s && s[k] ? `${fmt(s[k].rss / 1024)} (${fmt(s[k].dirty / 1024)})` : '–');
    lines.push(
      '',
      `Attribution at the end of the last round, ${scenarios[0]} (/proc/PID/smaps), MB of Rss (of it private dirty):`,
      '',
      `| Mapping | ${COLUMNS[0].label} server | ${COLUMNS[1].label} server | R waiting on stdin | R after \`library(mcplite)\` (ours) |`,
      '| --- | ---: | ---: | ---: | ---: |',
      ...all.map(
        (k) => `| ${k} | ${v(main.ours.at(-1).smaps, k)} | ${v(main.cran.at(-1).smaps, k)} | ${v(R.bare.at(-1).smaps, k)} | ${v(R.libOurs.at(-1).smaps, k)} |`,
      ),
      '',
      `Threads of the ${COLUMNS[0].label} server at the end: ${main.ours.at(-1).threadNames.join(', ')}; of the CRAN server: ${main.cran.at(-1).threadNames.join(', ')}.`,
    );
  }
  const md = lines.join('\n');
  console.log(md);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'memory-latest.md'), md + '\n');
  fs.writeFileSync(path.join(outDir, 'memory-latest.json'), JSON.stringify({ params: P, columns: COLUMNS, results: R }, null, 2));
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
