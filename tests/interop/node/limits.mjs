// node/limits.mjs - the BullMQ side of lanes' interop tests: global concurrency
// and rate limits, both ways. Imported by tests/interop/interop.mjs (the
// command dispatch).
import { Queue, Worker } from 'bullmq';
import { connection, fail, check, sleep, waitIdle } from './common.mjs';

// Global concurrency: set the queue's limit, add n "sleep" jobs at once and
// sample the active count every 5 ms until all completed; prints the time
// from the add to the last completion and the most jobs seen active.
export async function globalConcurrency(queue, limit, n, timeoutMs = 60000) {
  const q = new Queue(queue, { connection });
  await q.setGlobalConcurrency(Number(limit));
  const t0 = Date.now();
  await q.addBulk(Array.from({ length: Number(n) }, (_, i) => ({ name: 'sleep', data: { i } })));
  let maxActive = 0;
  for (;;) {
    const c = await q.getJobCounts('active', 'completed');
    maxActive = Math.max(maxActive, c.active);
    if (c.completed >= Number(n)) break;
    if (Date.now() - t0 > timeoutMs) fail('jobs not done in time', { c, maxActive });
    await sleep(5);
  }
  const ms = Date.now() - t0;
  await q.close();
  console.log(JSON.stringify({ ms, maxActive }));
}

// Rate limits (tests/interop/test_redis_interop.sh ratelimit*). n jobs named
// "plain" added at once.
export async function rlAdd(queue, n) {
  const q = new Queue(queue, { connection });
  await q.addBulk(Array.from({ length: Number(n) }, (_, i) => ({ name: 'plain', data: { i } })));
  await q.close();
  console.log(JSON.stringify({ added: Number(n) }));
}

// The limiter's windows rebuilt from sorted start times t (ms): a window
// starts at a take and lasts duration; the next starts at the first take
// after it; none may hold more than max. A take within tol ms of a
// window's end may be of either window and counts in the old one while it
// has room (the most lenient reading): Node's processedOn is its own clock
// before the take reaches Redis, a C worker's is the server's. The index
// of the first window's take that holds too many, or -1.
function overLimit(t, max, duration, tol) {
  for (let i = 0; i < t.length;) {
    const end = t[i] + duration;
    let j = i, k = 0;
    while (j < t.length && t[j] < end - tol) j++, k++;
    if (k > max) return i;
    while (j < t.length && t[j] < end + tol && k < max) j++, k++;
    i = j;
  }
  return -1;
}

// A Worker with limiter {max, duration} (concurrency 2) that says "ready"
// on stderr once it waits for jobs and returns when n jobs of the queue
// completed.
export async function rlWork(queue, max, duration, n) {
  const w = new Worker(queue, async () => null,
                       { connection, concurrency: 2, limiter: { max: Number(max), duration: Number(duration) } });
  await w.waitUntilReady();
  console.error('ready');
  const q = new Queue(queue, { connection });
  const t0 = Date.now();
  while ((await q.getCompletedCount()) < Number(n)) {
    if (Date.now() - t0 > 60000) fail('jobs not done in time');
    await sleep(20);
  }
  await w.close();
  await q.close();
  console.log(JSON.stringify({ done: Number(n) }));
}

// Every job of the queue completed, and no window of the limit took more
// than max (processedOn, 50 ms of tolerance). Prints the number of jobs
// and the span.
export async function rlCheck(queue, max, duration, n) {
  const q = new Queue(queue, { connection });
  const jobs = await q.getJobs(['completed'], 0, -1, true);
  check(jobs.length === Number(n), 'completed jobs', { got: jobs.length, want: Number(n) });
  const t = jobs.map(j => j.processedOn).sort((a, b) => a - b);
  const bad = overLimit(t, Number(max), Number(duration), 50);
  check(bad < 0, 'limit exceeded', { from: bad, starts: t.map(x => x - t[0]) });
  await q.close();
  console.log(JSON.stringify({ jobs: t.length, span: t[t.length - 1] - t[0] }));
}

// A C worker (`lanes worker`, run by this process) on limits set from
// Node: setGlobalRateLimit(2, 300) for a worker without a limit of its
// own, then queue.rateLimit(600) for one with --rate-limit 10/1000.
export async function rlNode(queue, cli, redisUrl) {
  const { spawnSync } = await import('node:child_process');
  const q = new Queue(queue, { connection });
  const runC = (...extra) => {
    const r = spawnSync(cli, ['worker', redisUrl, queue, '--exit-when-empty', ...extra,
                              '--exec', 'true'], { encoding: 'utf8' });
    check(r.status === 0, 'lanes worker', r.stderr);
  };
  await q.setGlobalRateLimit(2, 300);
  await q.addBulk(Array.from({ length: 6 }, (_, i) => ({ name: 'plain', data: { i } })));
  runC('--concurrency', '4');
  let jobs = await q.getJobs(['completed'], 0, -1, true);
  check(jobs.length === 6, 'global limit: completed', jobs.length);
  const t = jobs.map(j => j.processedOn).sort((a, b) => a - b);
  check(overLimit(t, 2, 300, 2) < 0, 'global limit exceeded', t.map(x => x - t[0]));
  await q.removeGlobalRateLimit();
  await q.clean(0, 100, 'completed');
  await q.rateLimit(600);
  const t0 = Date.now();
  await q.addBulk([{ name: 'plain', data: {} }, { name: 'plain', data: {} }]);
  runC('--rate-limit', '10/1000');
  jobs = await q.getJobs(['completed'], 0, -1, true);
  check(jobs.length === 2, 'manual limit: completed', jobs.length);
  for (const j of jobs) check(j.processedOn >= t0 + 590, 'taken during rateLimit', j.processedOn - t0);
  await q.close();
  console.log(JSON.stringify({ global: t[t.length - 1] - t[0], manual: Math.min(...jobs.map(j => j.processedOn)) - t0 }));
}

// What lanes set (`lanes jobs URL concurrency/rate-limit`) as Node reads
// it: getGlobalConcurrency, getGlobalRateLimit, getRateLimitTtl. Then
// Node sets the concurrency lanes reads back (checked by the caller).
export async function rlMeta(queue, conc, max, duration) {
  const q = new Queue(queue, { connection });
  const c = await q.getGlobalConcurrency();
  check(c === Number(conc), 'getGlobalConcurrency', c);
  const rl = await q.getGlobalRateLimit();
  check(rl && rl.max === Number(max) && rl.duration === Number(duration), 'getGlobalRateLimit', rl);
  const ttl = await q.getRateLimitTtl();
  check(ttl > 5000 && ttl <= 20000, 'getRateLimitTtl', ttl);
  await q.setGlobalConcurrency(5);
  await q.close();
  console.log(JSON.stringify({ concurrency: c, rateLimit: rl, ttl }));
}

// A job a C worker gave back as rate limited (`lanes worker --exec`, exit
// 77 with {"rate_limit_ms": 6000}), as Node sees it: waiting again with no
// attempt used, the queue limited (getRateLimitTtl) for up to 6 s; then a
// Node Worker with a limiter runs it only once the limit is over.
export async function rlError(queue, id) {
  const q = new Queue(queue, { connection });
  const job = await q.getJob(id);
  check(job && (await job.getState()) === 'waiting', 'state after RateLimitError', job && await job.getState());
  check(job.attemptsMade === 0 && job.attemptsStarted === 1, 'attempts', job);
  const ttl = await q.getRateLimitTtl(1);
  check(ttl > 500 && ttl <= 6000, 'getRateLimitTtl', ttl);
  const t0 = Date.now();
  const w = new Worker(queue, async () => 'ok', { connection, limiter: { max: 1, duration: 100 } });
  await waitIdle(queue);
  await w.close();
  const done = await q.getJob(id);
  check(done.returnvalue === 'ok' && done.processedOn >= t0 + ttl - 50, 'ran before the limit ended',
        { ttl, after: done.processedOn - t0 });
  await q.close();
  console.log(JSON.stringify({ ttl, ranAfter: done.processedOn - t0 }));
}
