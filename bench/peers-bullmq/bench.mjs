// bench.mjs - the BullMQ side of bench/bench_bullmq.c: stock bullmq 6.7.0
// and ioredis, from tests/interop's pinned install (its package-lock.json).
//
//   node bench.mjs worker URL QUEUE N CONCURRENCY   N no-op jobs added with
//        addBulk (untimed), then a Worker runs them: seconds until all done
//   node bench.mjs add URL QUEUE N                  N awaited Queue.add calls
//   node bench.mjs bulk URL QUEUE N                 addBulk, 1000 per call
//
// Prints {"seconds": S, "jobs": N} on stdout.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(root, 'tests', 'interop', 'package.json'));
const { Queue, Worker } = require('bullmq');

const [cmd, url, queue, nText, concText] = process.argv.slice(2);
const n = Number(nText);
const u = new URL(url);
const connection = { host: u.hostname, port: Number(u.port || 6379),
  db: Number(u.pathname.slice(1) || 0), maxRetriesPerRequest: null };
const CHUNK = 1000;

async function addBulk(q, count) {
  for (let done = 0; done < count; done += CHUNK) {
    const k = Math.min(CHUNK, count - done);
    await q.addBulk(Array.from({ length: k }, () => ({ name: 'noop', data: {} })));
  }
}

const q = new Queue(queue, { connection });
await q.waitUntilReady();
let seconds;
if (cmd === 'worker') {
  await addBulk(q, n);
  let completed = 0;
  let resolveDone;
  const allDone = new Promise(r => { resolveDone = r; });
  const t0 = process.hrtime.bigint();
  const w = new Worker(queue, async () => null,
    { connection, concurrency: Number(concText), autorun: false });
  w.on('completed', () => { if (++completed === n) resolveDone(); });
  w.run();
  await allDone;
  seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await w.close();
} else if (cmd === 'add') {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await q.add('noop', {});
  seconds = Number(process.hrtime.bigint() - t0) / 1e9;
} else if (cmd === 'bulk') {
  const t0 = process.hrtime.bigint();
  await addBulk(q, n);
  seconds = Number(process.hrtime.bigint() - t0) / 1e9;
} else {
  console.error(`unknown command ${cmd}`);
  process.exit(2);
}
await q.obliterate({ force: true });
await q.close();
console.log(JSON.stringify({ seconds, jobs: n }));
process.exit(0);
