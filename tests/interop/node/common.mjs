// node/common.mjs - the BullMQ side of lanes' interop tests: the helpers every
// module shares: the Redis connection from LANES_TEST_REDIS_URL, fail/check,
// sleep, the handler both sides implement, waiting for a queue to be idle.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue } from 'bullmq';

export const url = new URL(process.env.LANES_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0');

export const connection = {
  host: url.hostname,
  port: Number(url.port || 6379),
  db: Number(url.pathname.slice(1) || 0),
  maxRetriesPerRequest: null,
};

export function fail(msg, extra) {
  console.error(`interop: ${msg}${extra === undefined ? '' : ' ' + JSON.stringify(extra)}`);
  process.exit(1);
}

export function check(cond, msg, extra) {
  if (!cond) fail(msg, extra);
}

export const sleep = ms => new Promise(r => setTimeout(r, ms));

// Until cond() (an async test) holds, every 50 ms for at most ms; else fail
// with what and the last value of info().
export async function until(cond, ms, what, info = async () => undefined) {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) fail(what, await info());
    await sleep(50);
  }
}

// The handler both sides implement (tests/interop/redis_peer.c has the C twin):
// "flaky" fails its first two attempts, "doomed" always fails, others
// return {name, data}.
export async function handler(job) {
  if (job.name === 'flaky' && job.attemptsMade < 2)
    throw new Error(`flaky attempt ${job.attemptsMade + 1}`);
  if (job.name === 'doomed') throw new Error('doomed');
  return { name: job.name, data: job.data };
}

export async function waitIdle(queue, timeoutMs = 90000) {
  const q = new Queue(queue, { connection });
  const t0 = Date.now();
  for (;;) {
    const c = await q.getJobCounts();
    if (c.waiting + c.active + c.delayed + c.prioritized === 0) break;
    if (Date.now() - t0 > timeoutMs) fail('queue not idle in time', c);
    await sleep(50);
  }
  await q.close();
}
