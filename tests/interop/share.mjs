// share.mjs - who does the work when C workers and BullMQ Workers share a
// queue: a bounded measurement (docs/redis.md, "A C worker's share").
//
//   node tests/interop/share.mjs PEER [options]
//
// PEER is build/tests/redis_peer (its `work` is the C worker). Redis comes
// from LANES_TEST_REDIS_URL (scripts/with-services.sh sets it). It starts
// the C workers and the Node Workers (each a process of its own), waits
// until all are ready, then adds the jobs with addBulk from this process
// and waits until every one completed (at most --timeout s), stops the
// workers and prints one JSON line: the jobs each worker completed, the C
// workers' share, the seconds from the first add to the last completion
// and the jobs per second. Options (defaults in brackets):
//   --jobs N          jobs in all [20000]
//   --bulk N          jobs per addBulk [50]
//   --pause-ms N      sleep between two addBulk calls [0: none]
//   --producers N     adding at once, each with a connection of its own [1]
//   --prefill         add every job before starting the workers
//   --c N             C workers [2]      --node N   Node Workers [2]
//   --concurrency N   each worker's concurrency [8]
//   --job-ms N        what a job takes (a sleep; 0: a no-op) [0]
//   --timeout S       give up (exit 1) after S seconds [120]
//   --exec LANES      the C workers are `LANES worker ... --exec true`
//                     (their count is then the jobs Node did not complete)
// The queue is "share<pid>"; its keys are removed at the end.
import { spawn } from 'node:child_process';
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { connection, url, fail, sleep } from './node/common.mjs';

const args = process.argv.slice(2);

// A Node Worker process: counts its completions, prints them on SIGTERM.
if (args[0] === '--node-worker') {
  const [, queue, conc, jobMs] = args;
  let done = 0;
  const w = new Worker(queue, async () => {
    if (Number(jobMs) > 0) await sleep(Number(jobMs));
    return null;
  }, { connection, concurrency: Number(conc) });
  w.on('completed', () => { done++; });
  await w.waitUntilReady();
  console.error('ready');
  await new Promise(r => process.once('SIGTERM', r));
  await w.close();
  console.log(JSON.stringify({ completed: done }));
  process.exit(0);
}

const peer = args[0];
if (!peer || peer.startsWith('--')) fail('usage: node share.mjs PEER [options]');
const opt = { jobs: 20000, bulk: 50, 'pause-ms': 0, producers: 1, c: 2, node: 2, concurrency: 8, 'job-ms': 0,
  timeout: 120, prefill: false, exec: '' };
for (let i = 1; i < args.length; i++) {
  const k = args[i].replace(/^--/, '');
  if (!(k in opt)) fail(`unknown option ${args[i]}`);
  if (k === 'prefill') opt.prefill = true;
  else if (k === 'exec') opt.exec = args[++i];
  else opt[k] = Number(args[++i]);
}
const queue = `share${process.pid}`;
const name = opt['job-ms'] > 0 ? 'sleep' : 'noop';

// A child and what it prints: resolves {out} when it exits; 'ready' once
// it said word on stderr.
function start(cmd, argv, word) {
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  child.stdout.on('data', d => { out += d; });
  const ready = new Promise((resolve, reject) => {
    if (!word) resolve();
    child.stderr.on('data', d => {
      err += d;
      if (err.includes(word)) resolve();
    });
    child.once('exit', c => reject(new Error(`${cmd} exited (${c}): ${err}`)));
  });
  const exited = new Promise(resolve => child.once('exit', c => {
    if (opt.exec && argv[0] === 'worker') resolve('{"completed":null}');
    else if (c !== 0 || !out) fail(`${cmd} ${argv[0]} exited (${c}): ${err.trim()}`);
    resolve(out);
  }));
  return { child, ready, exited };
}

// The producers share the count of jobs left to add.
async function produce() {
  let left = opt.jobs;
  await Promise.all(Array.from({ length: opt.producers }, async () => {
    const q = new Queue(queue, { connection });
    while (left > 0) {
      const n = Math.min(opt.bulk, left);
      left -= n;
      await q.addBulk(Array.from({ length: n }, () => ({ name, data: {} })));
      if (opt['pause-ms'] > 0) await sleep(opt['pause-ms']);
    }
    await q.close();
  }));
}

const q = new Queue(queue, { connection });
const workers = [];
let t0;
try {
  if (opt.prefill) await produce();
  for (let i = 0; i < opt.c; i++) {
    if (opt.exec) {
      const prog = opt['job-ms'] > 0 ? ['sleep', String(opt['job-ms'] / 1000)] : ['true'];
      workers.push({ kind: 'c', ...start(opt.exec, ['worker', url.href, queue, '--concurrency',
        String(opt.concurrency), '--exec', ...prog], '') });
    } else {
      workers.push({ kind: 'c', ...start(peer, ['work', url.href, queue, '--concurrency',
        String(opt.concurrency), '--sleep-ms', String(opt['job-ms']), '--forever'], 'working') });
    }
  }
  for (let i = 0; i < opt.node; i++) {
    workers.push({ kind: 'node', ...start(process.execPath, [process.argv[1], '--node-worker',
      queue, String(opt.concurrency), String(opt['job-ms'])], 'ready') });
  }
  await Promise.all(workers.map(w => w.ready));
  t0 = Date.now();
  if (!opt.prefill) await produce();
  for (;;) {
    const c = await q.getJobCounts('completed', 'failed');
    if (c.completed + c.failed >= opt.jobs) break;
    if (Date.now() - t0 > opt.timeout * 1000) fail('not done in time', c);
    await sleep(20);
  }
} catch (e) {
  for (const w of workers) w.child.kill('SIGTERM');
  fail(String(e));
}
const seconds = (Date.now() - t0) / 1000;
for (const w of workers) w.child.kill('SIGTERM');
const done = await Promise.all(workers.map(async w => JSON.parse(await w.exited).completed));
if (opt.exec) { // the C workers together: what Node did not complete
  const node = done.filter((_, i) => workers[i].kind === 'node').reduce((a, b) => a + b, 0);
  done.forEach((_, i) => { if (workers[i].kind === 'c') done[i] = (opt.jobs - node) / opt.c; });
}
const sum = kind => done.filter((_, i) => workers[i].kind === kind).reduce((a, b) => a + b, 0);
const client = new IORedis(connection);
const keys = await client.keys(`bull:${queue}:*`);
for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
await client.quit();
await q.close();
console.log(JSON.stringify({
  c: done.filter((_, i) => workers[i].kind === 'c'),
  node: done.filter((_, i) => workers[i].kind === 'node'),
  cShare: Number((sum('c') / Math.max(1, sum('c') + sum('node'))).toFixed(3)),
  seconds: Number(seconds.toFixed(2)),
  jobsPerSec: Math.round(opt.jobs / seconds),
  opts: opt,
}));
process.exit(0);
