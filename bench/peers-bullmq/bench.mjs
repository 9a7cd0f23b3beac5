// bench.mjs - the BullMQ side of `lanes bench bullmq`
// (bench/experiments/exp_bullmq.c): stock bullmq 6.7.0 and ioredis, from
// tests/interop's pinned install (its package-lock.json).
//
//   node bench.mjs worker --workerJobs=N --concurrency=C ...
//        N no-op jobs added with addBulk (untimed), then a Worker of
//        concurrency C runs them: timed from run() to the N-th 'completed'
//        [--around=CMD]: run the shell command CMD just before and just
//        after the timed part (bench/tools/redis-instructions.sh dumps a
//        callgrind server's counts that way)
//   node bench.mjs add --addJobs=N ...     N awaited Queue.add calls
//   node bench.mjs bulk --bulkJobs=N ...   Queue.addBulk, 1000 jobs per call
//
// The server is $LANES_BENCH_REDIS_URL (redis://[[USER]:PASSWORD@]HOST[:PORT]
// [/DB][?prefix=P] or unix:/path[?db=N&prefix=P], as lanes reads it). Each
// case first runs once untimed on a tenth of the jobs (at most 1000) so
// Node's JIT and BullMQ's scripts are warm, as lanes' side is after the
// runner's warm-up. Queues are lanes-bench-node-<pid>-<case>[-warmup] and
// are obliterated afterwards. Prints {"jobsPerSec": R, "seconds": S,
// "jobs": N} as its last line; the worker case adds the server's side of
// the timed part: "redisCpuUsPerJob", "redisCallsPerJob",
// "redisScriptsPerJob" (INFO cpu and commandstats before and after).
import { execSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(root, 'tests', 'interop', 'package.json'));
const { Queue, Worker } = require('bullmq');
const IORedis = require('ioredis');

const CHUNK = 1000;

function options(argv) {
  const o = {};
  for (const a of argv) {
    const m = /^--([A-Za-z]+)=(.*)$/.exec(a);
    if (m) o[m[1]] = m[2];
  }
  return o;
}

// ioredis connection options and the BullMQ prefix from a lanes URL.
function connectionOf(text) {
  const u = new URL(text);
  const q = u.searchParams;
  // Give up after about 5 s without the server (it is gone when lanes
  // stopped it or died) instead of retrying for ever.
  const conn = { maxRetriesPerRequest: null, retryStrategy: (times) => (times > 20 ? null : 250) };
  if (u.protocol === 'unix:') {
    conn.path = u.pathname;
    conn.db = Number(q.get('db') || 0);
  } else if (u.protocol === 'redis:') {
    conn.host = u.hostname;
    conn.port = Number(u.port || 6379);
    conn.db = Number(u.pathname.slice(1) || 0);
    if (u.username) conn.username = decodeURIComponent(u.username);
    if (u.password) conn.password = decodeURIComponent(u.password);
  } else {
    throw new Error(`unsupported URL ${text}`);
  }
  return { connection: conn, prefix: q.get('prefix') || 'bull' };
}

async function addBulk(q, count) {
  for (let done = 0; done < count; done += CHUNK) {
    const k = Math.min(CHUNK, count - done);
    await q.addBulk(Array.from({ length: k }, () => ({ name: 'noop', data: {} })));
  }
}

// What the server says it spent since it started: CPU seconds (user +
// sys, INFO cpu) and commands run, all and scripts (INFO commandstats,
// script-inner calls included), read on a connection of its own.
async function serverStats(client) {
  const cpu = await client.info('cpu');
  const cmds = await client.info('commandstats');
  const field = (name) => Number((new RegExp(`^${name}:([0-9.]+)`, 'm').exec(cpu) || [])[1]);
  let calls = 0;
  let scripts = 0;
  for (const m of cmds.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls += Number(m[2]);
    if (m[1] === 'evalsha' || m[1] === 'eval') scripts += Number(m[2]);
  }
  return { cpu: field('used_cpu_user') + field('used_cpu_sys'), calls, scripts };
}

let server = {}; // the server's side of the last worker run, per job

// One run of a case on a fresh queue; seconds of the timed part. around:
// a shell command run just before and just after it, or undefined.
async function once(cmd, name, n, concurrency, base, around) {
  const q = new Queue(name, base);
  await q.waitUntilReady();
  let seconds;
  try {
    if (cmd === 'worker') {
      await addBulk(q, n);
      let completed = 0;
      let resolveDone;
      const allDone = new Promise((r) => { resolveDone = r; });
      const w = new Worker(name, async () => null, { ...base, concurrency, autorun: false });
      w.on('completed', () => { if (++completed === n) resolveDone(); });
      w.on('failed', (job, err) => { console.error(`job ${job && job.id} failed: ${err}`); });
      const client = new IORedis(base.connection);
      const before = await serverStats(client);
      if (around) execSync(around, { stdio: 'ignore' });
      const t0 = process.hrtime.bigint();
      w.run();
      await allDone;
      seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      if (around) execSync(around, { stdio: 'ignore' });
      const after = await serverStats(client);
      server = {
        redisCpuUsPerJob: ((after.cpu - before.cpu) * 1e6) / n,
        redisCallsPerJob: (after.calls - before.calls) / n,
        redisScriptsPerJob: (after.scripts - before.scripts) / n,
      };
      client.disconnect();
      await w.close();
      const c = await q.getJobCounts('completed', 'wait', 'active', 'failed');
      if (c.completed !== n || c.wait + c.active + c.failed !== 0)
        throw new Error(`worker: counts ${JSON.stringify(c)} after ${n} jobs`);
    } else if (cmd === 'add' || cmd === 'bulk') {
      const t0 = process.hrtime.bigint();
      if (cmd === 'add') {
        for (let i = 0; i < n; i++) await q.add('noop', {});
      } else {
        await addBulk(q, n);
      }
      seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const waiting = await q.getWaitingCount();
      if (waiting !== n) throw new Error(`${cmd}: ${waiting} jobs waiting after adding ${n}`);
    } else {
      throw new Error(`unknown case ${cmd} (worker, add or bulk)`);
    }
  } finally {
    await q.obliterate({ force: true });
    await q.close();
  }
  return seconds;
}

const [cmd, ...rest] = process.argv.slice(2);
const opt = options(rest);
const url = process.env.LANES_BENCH_REDIS_URL;
if (!url) {
  console.error('bench.mjs: LANES_BENCH_REDIS_URL is not set');
  process.exit(2);
}
const n = Number(opt[`${cmd}Jobs`]);
const concurrency = Number(opt.concurrency || 50);
if (!(n >= 1)) {
  console.error(`bench.mjs: need --${cmd}Jobs=N (N >= 1)`);
  process.exit(2);
}
const base = connectionOf(url);
const name = `lanes-bench-node-${process.pid}-${cmd}`;
await once(cmd, `${name}-warmup`, Math.max(1, Math.min(1000, Math.floor(n / 10))), concurrency,
  base);
const seconds = await once(cmd, name, n, concurrency, base, opt.around);
console.log(JSON.stringify({ jobsPerSec: n / seconds, seconds, jobs: n, ...server }));
process.exit(0);
