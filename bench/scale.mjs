#!/usr/bin/env node
// Goal 6 of issue 41 ("Scale"): how answer time and memory grow with the
// size of a data frame answer, and how fast JSON array arguments become R
// lists. Real servers (`Rscript --vanilla bench/servers/scale.R`) over real
// pipes; plain node, no npm modules (an R client reads a 100 MB line at
// about 60 MB/s, slower than the server it would measure).
//
//   node bench/scale.mjs before=/work/lib-main after=/work/lib-scale
//
// Each argument is a label and an R library holding an mcplite build; the
// builds alternate within every round (the order rotates), each size in a
// fresh server, so both see the same machine. Per server:
// - peak: VmHWM of the server after the first call, minus its VmRSS before
//   it (after `initialize`, the data already built);
// - wall: from writing the request to reading the answer's last byte, the
//   median over the calls (at least BENCH_SCALE_CALLS, and at least 1 s);
// - CPU: the server's utime + stime (/proc/<pid>/stat) over those calls,
//   divided by their number (clock ticks are 10 ms; the batch is long).
// Cells are medians over rounds. The slope between two sizes is
// log(t2 / t1) / log(n2 / n1): 1 is linear.
//
// Environment: BENCH_SCALE_ROUNDS (3), BENCH_SCALE_ROWS (1e3,1e4,1e5,1e6),
// BENCH_SCALE_MB (10,25,50), BENCH_SCALE_PARTS (frame,array), BENCH_SCALE_CALLS (5),
// BENCH_SCALE_TOOLS (frame,frame_sc,frame_obj).

import { spawn, execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.join(HERE, 'servers', 'scale.R');
const env = process.env;
const list = (name, dflt) => (env[name] || dflt).split(',').map((s) => s.trim()).filter(Boolean);
const ROUNDS = Number.parseInt(env.BENCH_SCALE_ROUNDS || '3', 10);
const ROWS = list('BENCH_SCALE_ROWS', '1e3,1e4,1e5,1e6').map(Number);
const MBS = list('BENCH_SCALE_MB', '10,25,50').map(Number);
const PARTS = list('BENCH_SCALE_PARTS', 'frame,array');
const TOOLS = list('BENCH_SCALE_TOOLS', 'frame,frame_sc,frame_obj');
const TITLES = {
  frame: 'plain data frame answer (the tool returns `df`)',
  frame_sc: '`tool_result(structured_content = df)` (an array: carried as text only)',
  frame_obj: '`tool_result(structured_content = list(rows = df))` (structuredContent and its text)',
};
const MIN_CALLS = Number.parseInt(env.BENCH_SCALE_CALLS || '5', 10);
const TICK = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

const builds = process.argv.slice(2).map((a) => {
  const i = a.indexOf('=');
  return i > 0 ? { label: a.slice(0, i), lib: a.slice(i + 1) } : { label: path.basename(a), lib: a };
});
if (!builds.length) builds.push({ label: 'R_LIBS', lib: env.R_LIBS || '' });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICK; // utime, stime
}
function statusKb(pid, key) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'));
  return m ? Number(m[1]) : NaN;
}

// A server and its answers: every line it writes is an answer to the one
// request in flight (no progress, no logging notifications).
class Server {
  constructor(lib, rows) {
    this.proc = spawn('Rscript', ['--vanilla', SERVER], {
      env: { ...env, R_LIBS: lib, BENCH_SCALE_ROWS: String(rows) },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.pid = this.proc.pid;
    this.bytes = 0;
    this.text = [];
    this.keepText = false;
    this.waiting = null;
    this.proc.stdout.on('data', (chunk) => {
      let at = chunk.indexOf(10);
      while (at >= 0) {
        this.bytes += at + 1;
        if (this.keepText) this.text.push(chunk.subarray(0, at));
        const done = { bytes: this.bytes, text: this.keepText ? Buffer.concat(this.text).toString() : null };
        this.bytes = 0;
        this.text = [];
        const w = this.waiting;
        this.waiting = null;
        if (w) w(done);
        chunk = chunk.subarray(at + 1);
        at = chunk.indexOf(10);
      }
      this.bytes += chunk.length;
      if (this.keepText) this.text.push(chunk);
    });
    this.ended = new Promise((resolve) => this.proc.on('exit', resolve));
  }
  request(line, keepText = false) {
    this.keepText = keepText;
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.proc.stdin.write(line + '\n', (e) => e && reject(e));
    });
  }
  async stop() {
    this.proc.stdin.end();
    await this.ended;
  }
}

let nextId = 1;
const call = (name, args) =>
  `{"jsonrpc":"2.0","id":${nextId++},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
const INIT =
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}';

async function start(lib, rows) {
  const s = new Server(lib, rows);
  const init = await s.request(INIT, true);
  if (!/serverInfo/.test(init.text)) throw new Error(`no initialize answer: ${init.text}`);
  s.proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return s;
}

// One fresh server: the first call for the peak, then timed calls.
async function measure(lib, rows, line, extra) {
  const s = await start(lib, rows);
  const rss0 = statusKb(s.pid, 'VmRSS');
  const first = await s.request(line, true);
  if (!/"isError":false/.test(first.text)) throw new Error(`call failed: ${first.text.slice(0, 300)}`);
  const peakKb = statusKb(s.pid, 'VmHWM') - rss0;
  const walls = [];
  const cpu0 = cpuMs(s.pid);
  const t0 = now();
  while (walls.length < MIN_CALLS || (now() - t0 < 1000 && walls.length < 500)) {
    const t = now();
    await s.request(line);
    walls.push(now() - t);
  }
  const cpu = (cpuMs(s.pid) - cpu0) / walls.length;
  const more = extra ? await extra(s) : {};
  await s.stop();
  return { bytes: first.bytes, peakMb: peakKb / 1024, wall: median(walls), cpu, ...more };
}

// Arrays of about `mb` MB: numbers, strings, or small objects.
function arrayText(kind, mb) {
  const target = mb * 1e6;
  const parts = [];
  let size = 2;
  for (let i = 0; size < target; i++) {
    const x =
      kind === 'numbers'
        ? String(Math.round(Math.sin(i) * 1e6) / 1e3)
        : kind === 'strings'
          ? `"item ${i} of the list"`
          : `{"id":${i},"name":"item ${i}","score":${Math.round(Math.cos(i) * 1e4) / 1e2}}`;
    parts.push(x);
    size += x.length + 1;
  }
  return `[${parts.join(',')}]`;
}

const slope = (t1, t2, n1, n2) => Math.log(t2 / t1) / Math.log(n2 / n1);
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'NA');

async function main() {
  console.log(`# bench/scale.mjs  ${new Date().toISOString()}  load at start: ${load()}`);
  console.log(`# builds: ${builds.map((b) => `${b.label}=${b.lib}`).join(' ')}; ${ROUNDS} rounds`);
  const res = {}; // key -> label -> [results]
  const put = (key, label, r) => (((res[key] ||= {})[label] ||= []).push(r));
  const arrays = PARTS.includes('array') ? Object.fromEntries(
    ['numbers', 'strings', 'objects'].flatMap((k) => MBS.map((mb) => [`${k} ${mb}`, arrayText(k, mb)]))) : {};
  for (let round = 0; round < ROUNDS; round++) {
    const order = builds.map((_, i) => builds[(i + round) % builds.length]);
    if (PARTS.includes('frame')) {
      for (const rows of ROWS) {
        for (const tool of TOOLS) {
          for (const b of order) put(`${tool} ${rows}`, b.label, await measure(b.lib, rows, call(tool, '{}')));
        }
      }
    }
    for (const [key, text] of Object.entries(arrays)) {
      const line = call('take', `{"x":${text}}`);
      const sized = async (s) => {
        const a = await s.request(call('take', `{"x":${text},"size":true}`), true);
        const m = a.text.match(/\\"bytes\\":([0-9.e+]+)/);
        return { objMb: m ? Number(m[1]) / 1048576 : NaN };
      };
      for (const b of order) put(`take ${key}`, b.label, await measure(b.lib, 1, line, sized));
      if (key.startsWith('numbers')) {
        // R's floor for the same list, in a fresh server of the first build.
        const n = text.split(',').length;
        const s = await start(builds[0].lib, 1);
        const secs = [];
        for (let i = 0; i < MIN_CALLS; i++) {
          const a = await s.request(call('r_floor', `{"n":${n}}`), true);
          const m = a.text.match(/"text":"([0-9.e+-]+)"/);
          secs.push(m ? Number(m[1]) : NaN);
        }
        await s.stop();
        put(`floor ${key}`, 'R', { first: secs[0] * 1000, wall: median(secs.slice(1)) * 1000 });
      }
    }
    console.log(`# round ${round + 1} done, load ${load()}`);
  }
  const cell = (key, label, field) => median((res[key]?.[label] || []).map((r) => r[field]));
  if (PARTS.includes('frame')) {
    for (const tool of TOOLS) {
      console.log(`\n## ${TITLES[tool]}`);
      console.log('| build | rows | answer MB | wall ms | CPU ms | wall slope | CPU slope | peak MB | peak / answer |');
      console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
      for (const b of builds) {
        ROWS.forEach((rows, i) => {
          const k = `${tool} ${rows}`;
          const mb = cell(k, b.label, 'bytes') / 1e6;
          const w = cell(k, b.label, 'wall');
          const c = cell(k, b.label, 'cpu');
          let ws = '', cs = '';
          if (i > 0) {
            const p = `${tool} ${ROWS[i - 1]}`;
            ws = f(slope(cell(p, b.label, 'wall'), w, ROWS[i - 1], rows), 2);
            cs = f(slope(cell(p, b.label, 'cpu'), c, ROWS[i - 1], rows), 2);
          }
          const peak = cell(k, b.label, 'peakMb');
          console.log(`| ${b.label} | ${rows.toExponential(0)} | ${f(mb, 2)} | ${f(w, 1)} | ${f(c, 1)} | ${ws} | ${cs} | ${f(peak)} | ${f(peak / (mb / 1.048576), 2)} |`);
        });
      }
    }
  }
  if (Object.keys(arrays).length) {
    console.log('\n## JSON array argument (`take`, answers its length)');
    console.log('| build | array | input MB | wall ms | MB/s (wall) | MB/s (CPU) | peak MB | R object MB | peak / (object + input) |');
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const b of builds) {
      for (const key of Object.keys(arrays)) {
        const k = `take ${key}`;
        const inMb = arrays[key].length / 1e6;
        const w = cell(k, b.label, 'wall');
        const c = cell(k, b.label, 'cpu');
        const peak = cell(k, b.label, 'peakMb');
        const obj = cell(k, b.label, 'objMb');
        console.log(`| ${b.label} | ${key.split(' ')[0]} | ${f(inMb)} | ${f(w)} | ${f((inMb * 1000) / w)} | ${f((inMb * 1000) / c)} | ${f(peak)} | ${f(obj)} | ${f(peak / (obj + inMb / 1.048576), 2)} |`);
      }
    }
  }
  const floors = Object.keys(arrays).filter((k) => k.startsWith('numbers'));
  if (floors.length) {
    console.log('\n## R\'s own floor: `as.list()` of the same number of doubles, in the server');
    console.log('| array | input MB | first call ms | later calls ms | MB/s at most (later calls) |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const key of floors) {
      const inMb = arrays[key].length / 1e6;
      const w = cell(`floor ${key}`, 'R', 'wall');
      console.log(`| ${key.split(' ')[0]} | ${f(inMb)} | ${f(cell(`floor ${key}`, 'R', 'first'))} | ${f(w)} | ${f((inMb * 1000) / w)} |`);
    }
  }
  console.log(`\n# load at end: ${load()}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
