#!/usr/bin/env node
// Sequential round trip of a trivial `add` call (issue 41, goal 1): one
// request written, its answer awaited, then the next; prints the median and
// the 10th and 90th percentiles over BENCH_RT_CALLS calls (after 1,000 to
// warm up), per build, the builds alternating BENCH_RT_ROUNDS times.
//
//   node bench/roundtrip.mjs before=/path/to/lib-main after=/path/to/lib-new
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CALLS = Number.parseInt(process.env.BENCH_RT_CALLS || '20000', 10);
const ROUNDS = Number.parseInt(process.env.BENCH_RT_ROUNDS || '3', 10);
const WARMUP = 1000;
const META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const call = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2},${META}}}\n`;

function run(lib) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, R_LIBS: lib };
    const p = spawn('Rscript', ['--vanilla', path.join(HERE, 'servers', 'pkg-add.R')], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    let rest = '';
    let id = 0;
    let t0 = 0n;
    const times = [];
    const send = () => {
      id++;
      t0 = process.hrtime.bigint();
      p.stdin.write(call(id));
    };
    p.on('error', reject);
    p.stdout.setEncoding('utf8');
    p.stdout.on('data', (d) => {
      rest += d;
      let nl;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (!line.includes('"result"') || !line.includes(`"id":${id},`)) return reject(new Error(`unexpected answer: ${line.slice(0, 200)}`));
        const t = process.hrtime.bigint();
        if (id > WARMUP) times.push(Number(t - t0) / 1000);
        if (id >= CALLS + WARMUP) {
          p.stdin.end();
          times.sort((a, b) => a - b);
          const q = (f) => times[Math.floor(f * times.length)];
          return resolve({ median: q(0.5), p10: q(0.1), p90: q(0.9) });
        }
        send();
      }
    });
    send();
  });
}

const builds = process.argv.slice(2).map((a) => {
  const i = a.indexOf('=');
  return { label: a.slice(0, i), lib: a.slice(i + 1) };
});
if (!builds.length) {
  console.error('usage: node bench/roundtrip.mjs label=/path/to/lib ...');
  process.exit(2);
}
console.log(`# ${new Date().toISOString()}, ${CALLS} calls per run, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| round | build | median us | p10 us | p90 us |');
console.log('| ---: | --- | ---: | ---: | ---: |');
for (let r = 1; r <= ROUNDS; r++) {
  for (const b of builds) {
    const s = await run(b.lib);
    console.log(`| ${r} | ${b.label} | ${s.median.toFixed(1)} | ${s.p10.toFixed(1)} | ${s.p90.toFixed(1)} |`);
  }
}
console.log(`# load average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
