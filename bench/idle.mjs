#!/usr/bin/env node
// Idle wake-ups (issue 41, goal 3): how many times the threads of an idle
// server, and of every process it started (workers), were switched out
// (voluntary_ctxt_switches + nonvoluntary_ctxt_switches of
// /proc/<pid>/task/*/status) over BENCH_IDLE_S seconds (default 5) with
// nothing arriving, after an initialize handshake. Linux only; plain node
// (>= 18), no npm modules. Run: node bench/idle.mjs (see bench/README.md).
//
// Configurations: ours in-process, ours with workers = 2, ours' live-session
// server with no session running, and the pure-R CRAN release (the library
// bench/run.sh installs: bench/.lib-cran, or BENCH_CRAN_LIB). Ours comes
// from R_LIBS as set (or MCPLITE_LIB). BENCH_IDLE_CONFIGS picks some
// (inproc,workers,session,cran); BENCH_REPS repetitions each.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const idleSeconds = env.BENCH_IDLE_S ? Number.parseFloat(env.BENCH_IDLE_S) : 5;
const reps = env.BENCH_REPS ? Number.parseInt(env.BENCH_REPS, 10) : 3;
const cranLib = env.BENCH_CRAN_LIB || path.join(HERE, '.lib-cran');
const oursLib = env.MCPLITE_LIB || env.R_LIBS || '';

const CONFIGS = {
  inproc: { label: 'ours, in-process', args: [path.join(HERE, 'servers', 'workers.R')], env: { BENCH_WORKERS: '0', R_LIBS: oursLib } },
  workers: { label: 'ours, workers = 2', args: [path.join(HERE, 'servers', 'workers.R')], env: { BENCH_WORKERS: '2', R_LIBS: oursLib } },
  session: {
    label: 'ours, mcp_session_server(), no session',
    args: ['-e', 'mcplite::mcp_session_server()'],
    env: { R_LIBS: oursLib, MCPLITE_SESSION: `bench-idle-none-${process.pid}` },
  },
  cran: { label: 'mcplite 0.2.0 (CRAN), in-process', args: [path.join(HERE, 'servers', 'pkg-add.R')], env: { R_LIBS: cranLib } },
};
const wanted = (env.BENCH_IDLE_CONFIGS || 'inproc,workers,session,cran').split(',');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The private directories (mcplite-*) of the Unix sockets `pid` has open.
function privateDirs(pid) {
  const inodes = new Set();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let link = '';
    try {
      link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const m = link.match(/^socket:\[(\d+)\]$/);
    if (m) inodes.add(m[1]);
  }
  const dirs = new Set();
  for (const line of fs.readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 8 && inodes.has(f[6])) {
      const m = f[7].match(/^(.*\/mcplite-[^/]+)\//);
      if (m) dirs.add(m[1]);
    }
  }
  return [...dirs];
}

// Every process of the server: `pid`, its descendants, and the daemons it
// launched (mirai's launch_local() detaches them, so they are no children:
// found by the server's private directory on their command line).
function family(pid) {
  const out = [pid];
  const dirs = privateDirs(pid);
  if (dirs.length) {
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d) || Number(d) === pid) continue;
      let cmd = '';
      try {
        cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (dirs.some((dir) => cmd.includes(dir))) out.push(Number(d));
    }
  }
  for (let i = 0; i < out.length; i++) {
    if (!fs.existsSync(`/proc/${out[i]}/task`)) continue;
    for (const task of fs.readdirSync(`/proc/${out[i]}/task`, { withFileTypes: false })) {
      let kids = '';
      try {
        kids = fs.readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const k of kids.split(/\s+/).filter(Boolean)) if (!out.includes(Number(k))) out.push(Number(k));
    }
  }
  return out;
}

// Switches of every thread of every process in `pids`, by "pid/tid name".
function switches(pids) {
  const by = new Map();
  for (const pid of pids) {
    let tasks = [];
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      let status;
      try {
        status = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      } catch {
        continue;
      }
      const field = (k) => Number((status.match(new RegExp(`^${k}:\\s*(\\S+)`, 'm')) || [])[1] || 0);
      const name = (status.match(/^Name:\s*(.*)$/m) || [])[1] || '?';
      by.set(`${pid}/${tid} ${name}`, field('voluntary_ctxt_switches') + field('nonvoluntary_ctxt_switches'));
    }
  }
  return by;
}

async function measure(cfg) {
  const proc = spawn('Rscript', ['--vanilla', ...cfg.args], { env: { ...env, ...cfg.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (b) => (stderr = (stderr + b).slice(-4000)));
  const exited = new Promise((r) => proc.on('close', r));
  const answered = new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (b) => {
      buf += b;
      if (buf.includes('\n')) resolve(buf);
    });
    proc.on('close', (code) => reject(new Error(`server exited (${code}) before answering:\n${stderr}`)));
  });
  proc.stdin.write(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench-idle","version":"0"}}}\n' +
      '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
  );
  await answered;
  // Let start-up settle (workers connect, R finishes its own start) before
  // the window opens.
  await sleep(1500);
  const pids = family(proc.pid);
  const before = switches(pids);
  const load = os.loadavg()[0];
  await sleep(idleSeconds * 1000);
  const after = switches(family(proc.pid));
  let total = 0;
  const busy = [];
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    total += d;
    if (d > 0) busy.push(`${k}: ${d}`);
  }
  proc.stdin.end();
  await exited;
  return { total, threads: after.size, processes: pids.length, load, busy };
}

const rows = [];
for (let rep = 0; rep < reps; rep++) {
  for (const key of wanted) {
    const cfg = CONFIGS[key];
    if (!cfg) throw new Error(`unknown configuration ${key}`);
    if (key === 'cran' && !fs.existsSync(path.join(cranLib, 'mcplite'))) {
      console.error(`# ${cfg.label}: not installed in ${cranLib} (bash bench/run.sh installs it); skipped`);
      continue;
    }
    const r = await measure(cfg);
    rows.push({ key, rep, ...r });
    console.error(
      `# ${cfg.label}, rep ${rep + 1}: ${r.total} switches in ${idleSeconds} s (${r.processes} processes, ${r.threads} threads, load ${r.load.toFixed(2)})` +
        (r.busy.length ? `\n#   ${r.busy.slice(0, 12).join('\n#   ')}` : ''),
    );
  }
}

console.log(`| Configuration | switches per ${idleSeconds} s idle (each repetition) | processes / threads | load average (1 min) |`);
console.log('|---|---|---|---|');
for (const key of wanted) {
  const rs = rows.filter((r) => r.key === key);
  if (!rs.length) continue;
  console.log(
    `| ${CONFIGS[key].label} | ${rs.map((r) => r.total).join(', ')} | ${rs[0].processes} / ${rs[0].threads} | ${rs.map((r) => r.load.toFixed(2)).join(', ')} |`,
  );
}
