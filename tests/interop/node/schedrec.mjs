// node/schedrec.mjs - the BullMQ side of the interop cases of a scheduler
// whose current iteration's holder died (tests/interop/cases/schedrec.sh).
// A BullMQ Worker takes an iteration (moveToActive) and makes the next one
// in a later call (upsertJobScheduler with producerId = the taken job);
// sr-take makes the take alone, with the worker's own backend call, and
// optionally that second call as the worker makes it, so the window
// between the two is reproduced without timing. Whichever way the holder
// died, a stalled check (BullMQ's or lanes') requeues the iteration,
// never fails it, and the take that runs it makes the next iteration if
// none was made.
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { CronExpressionParser } from 'cron-parser';
import { check, connection, sleep } from './common.mjs';

const EVERY = 60000;
const PATTERN = '0 0 1 1 *', TZ = 'Europe/Berlin';

// kind 'every' (every minute) or 'cron' (PATTERN in TZ: New Year in Berlin).
function repeatOpts(kind) {
  return kind === 'cron' ? { pattern: PATTERN, tz: TZ } : { every: EVERY };
}

// The iteration after one at ms, as BullMQ computes it (its every
// arithmetic with no missed slot; cron-parser after max(now, ms)).
function after(kind, ms) {
  if (kind !== 'cron') return ms + EVERY;
  const at = new Date(Math.max(Date.now(), ms));
  return CronExpressionParser.parse(PATTERN, { currentDate: at, tz: TZ }).next().getTime();
}

async function pending(q) {
  return (await q.getJobs(['delayed', 'waiting', 'prioritized'], 0, -1))
    .filter(j => j && j.repeatJobKey === 'sr');
}

// Scheduler 'sr' (repeatOpts(kind), data {k:1}); a worker's take of its
// first iteration (promoted when delayed) with a 1 s lock, never renewed;
// with upsert '1' also the worker's next call. Prints {id} of the taken
// iteration.
export async function srTake(queue, upsert, kind) {
  const q = new Queue(queue, { connection });
  await q.upsertJobScheduler('sr', repeatOpts(kind), { name: 'tick', data: { k: 1 } });
  const first = (await pending(q))[0];
  if ((await first.getState()) === 'delayed') await first.promote();
  const w = new Worker(queue, null, { connection, autorun: false, lockDuration: 1000 });
  await w.waitUntilReady();
  const [data, id] = await w.backend.moveToActive('sr-token', undefined);
  check(data && id && id.startsWith('repeat:sr:'), 'the take of the iteration', id);
  check((await pending(q)).length === 0, 'pending iterations after the take alone');
  if (upsert === '1') {
    const job = (await q.getJob(id));
    const js = await w.jobScheduler;
    await js.upsertJobScheduler(job.repeatJobKey, job.opts.repeat, job.name, job.data, job.opts,
                                { override: false, producerId: job.id });
    check((await pending(q)).length === 1, 'pending iterations after the worker\'s next call');
  }
  if (upsert === 'stall') await nodeStall(q, w, id);
  await w.close();
  await q.close();
  console.log(JSON.stringify({ id }));
}

// BullMQ's own stalled check (its Lua, run by the Worker's backend as its
// timer would, with maxStalledCount 0) on the taken iteration id once its
// lock lapsed: the first run marks it, the second moves it back to wait.
// BullMQ 6.7 sets no deferred failure (defa) on a scheduler's iteration.
async function nodeStall(q, w, id) {
  w.opts.maxStalledCount = 0;
  w.opts.stalledInterval = 100;
  const redis = new IORedis(connection);
  const jkey = `bull:${q.name}:${id}`;
  for (let i = 0; i < 100 && (await redis.exists(jkey + ':lock')); i++) await sleep(50);
  await w.backend.moveStalledJobsToWait();
  await sleep(150);
  await w.backend.moveStalledJobsToWait();
  const job = await q.getJob(id);
  check((await job.getState()) === 'waiting', 'back in wait after BullMQ\'s stalled check',
        await job.getState());
  check((await redis.hget(jkey, 'defa')) === null, 'no deferred failure on an iteration');
  await redis.quit();
}

// After lanes' stalled check requeued iteration id (past maxStalledCount:
// BullMQ's check never fails an iteration) and a lanes worker ran it: it
// completed, stalled once, with no deferred failure, and sr has exactly
// one pending iteration, after(kind) it, with the template's data,
// iteration count 2 and the scheduler pointing at it. Prints {next}.
export async function srCheck(queue, id, kind) {
  const q = new Queue(queue, { connection });
  let j;
  for (let i = 0; i < 200; i++) {
    j = await q.getJob(id);
    if (j && j.finishedOn) break;
    await sleep(50);
  }
  check(j && (await j.getState()) === 'completed', 'the taken iteration is not completed',
        j && [j.id, j.failedReason]);
  check(j.stalledCounter === 1, 'stalled once', j.stalledCounter);
  const n = await onePending(q, id, kind);
  check(JSON.stringify(n.data) === '{"k":1}' && n.name === 'tick', 'its name and data', n.data);
  await q.close();
  console.log(JSON.stringify({ next: n.id }));
}

// sr's one pending iteration (waited for up to 5 s: a take makes it in a
// call of its own), after(kind) the iteration id, with count 2 and the
// scheduler pointing at it (its time, ic 2, delayed).
async function onePending(q, id, kind) {
  const ms = Number(id.split(':')[2]);
  let p = await pending(q);
  for (let i = 0; i < 100 && p.length === 0; i++) {
    await sleep(50);
    p = await pending(q);
  }
  check(p.length === 1, 'pending iterations after the stall', p.map(x => x.id));
  const n = p[0];
  const nms = after(kind, ms);
  check(n.id === `repeat:sr:${nms}`, 'the next iteration', [n.id, nms]);
  const r = n.opts.repeat;
  check(r.count === 2 && (kind === 'cron' ? r.pattern === PATTERN && r.tz === TZ && n.opts.prevMillis === nms
                                           : r.every === EVERY), 'its opts', n.opts);
  const redis = new IORedis(connection);
  const base = `bull:${q.name}:`;
  check(Number(await redis.zscore(base + 'repeat', 'sr')) === nms, 'the scheduler\'s time');
  check((await redis.hget(base + 'repeat:sr', 'ic')) === '2', 'iteration count');
  check(Number(await redis.zscore(base + 'delayed', n.id)) > 0, 'the next one is delayed');
  await redis.quit();
  return n;
}

// Scheduler 'sr' (every minute, template NAME with data {k:1}) for a C
// worker to take: prints {id} of its first iteration, waiting.
export async function srAdd(queue, name) {
  const q = new Queue(queue, { connection });
  await q.upsertJobScheduler('sr', repeatOpts('every'), { name, data: { k: 1 } });
  const first = (await pending(q))[0];
  if ((await first.getState()) === 'delayed') await first.promote();
  await q.close();
  console.log(JSON.stringify({ id: first.id }));
}

// Pause the queue (BullMQ's meta field): a lanes worker then only checks
// for stalls, it takes nothing.
export async function srPause(queue) {
  const q = new Queue(queue, { connection });
  await q.pause();
  await q.close();
  console.log(JSON.stringify({ paused: true }));
}

// Until lanes' stalled check (maxStalledCount 0) moved iteration id back
// to wait: stalled once, no deferred failure (defa), not finished.
export async function srRequeued(queue, id) {
  const q = new Queue(queue, { connection });
  // The state first, then the job: a job read before its move would be
  // the active one's, stalledCounter and all (the queue is paused, so
  // nothing moves it again once it is back in wait).
  let state;
  for (let i = 0; i < 200; i++) {
    state = await q.getJobState(id);
    if (state !== 'active') break;
    await sleep(50);
  }
  const j = await q.getJob(id);
  check(state === 'waiting', 'back in wait after lanes\' stalled check', [state, j && j.failedReason]);
  check(j.stalledCounter === 1 && !j.finishedOn && !j.failedReason, 'requeued, not failed',
        [j.stalledCounter, j.finishedOn, j.failedReason]);
  const redis = new IORedis(connection);
  check((await redis.hget(`bull:${queue}:${id}`, 'defa')) === null, 'no deferred failure');
  await redis.quit();
  await q.close();
  console.log(JSON.stringify({ requeued: id }));
}

// Then a stock Node Worker (the queue resumed) takes the requeued
// iteration id, completes it, and sr has exactly one pending iteration
// after it (made by whichever take found id current). Prints {next}.
export async function srNodeTake(queue, id, kind) {
  const q = new Queue(queue, { connection });
  await q.resume();
  const ran = [];
  const w = new Worker(queue, async job => { ran.push(job.id); return 1; }, { connection });
  let j;
  for (let i = 0; i < 200; i++) {
    j = await q.getJob(id);
    if (j && j.finishedOn) break;
    await sleep(50);
  }
  check(j && (await j.getState()) === 'completed' && j.returnvalue === 1,
        'a Node Worker completed the requeued iteration', j && [j.id, j.failedReason]);
  check(ran.length === 1 && ran[0] === id, 'what the Node Worker ran', ran);
  const n = await onePending(q, id, kind);
  await w.close();
  await q.close();
  console.log(JSON.stringify({ next: n.id }));
}

// Then (lanes' worker stopped) a Node Worker runs the next iteration id
// (promoted) and makes the third, after(kind) it.
export async function srRun(queue, id, kind) {
  const q = new Queue(queue, { connection });
  const n = await q.getJob(id);
  const nms = Number(id.split(':')[2]);
  await n.promote();
  let ran = null;
  const w = new Worker(queue, async job => { ran = job.id; return 1; }, { connection });
  for (let i = 0; i < 200 && !ran; i++) await sleep(50);
  check(ran === n.id, 'a Node Worker ran the next iteration', ran);
  for (let i = 0; i < 100 && (await pending(q)).length !== 1; i++) await sleep(50);
  await w.close();
  const third = await pending(q);
  check(third.length === 1 && third[0].id === `repeat:sr:${after(kind, nms)}`, 'the third iteration',
        third.map(x => x.id));
  await q.close();
  console.log(JSON.stringify({ next: n.id, third: third[0].id }));
}

// Two plain jobs of queue carrying rjk, taken by a worker's backend with a
// 1 s lock that then lapses: 'legacy' names a legacy repeatable job (rjk
// a member of the repeat ZSET, no repeat:<rjk> hash), 'nothing' names no
// scheduler. Prints {legacy, nothing}: their ids.
export async function srRjkTake(queue) {
  const q = new Queue(queue, { connection });
  const redis = new IORedis(connection);
  const base = `bull:${queue}:`;
  const ids = {};
  for (const name of ['legacy', 'nothing']) {
    const j = await q.add(name, { k: 1 });
    await redis.hset(base + j.id, 'rjk', `${name}-key`);
    ids[name] = j.id;
  }
  await redis.zadd(base + 'repeat', Date.now() + EVERY, 'legacy-key');
  const w = new Worker(queue, null, { connection, autorun: false, lockDuration: 1000 });
  await w.waitUntilReady();
  for (let i = 0; i < 2; i++) {
    const [data, id] = await w.backend.moveToActive(`rjk-token-${i}`, undefined);
    check(data && (id === ids.legacy || id === ids.nothing), 'the take', id);
  }
  await w.close();
  await redis.quit();
  await q.close();
  console.log(JSON.stringify(ids));
}

// Once their locks lapsed, a stalled check past maxStalledCount 0 on the
// jobs of sr-rjk-take: 'bullmq' runs BullMQ's own (twice: mark, then
// sweep), 'lanes' waits for lanes' (a `lanes worker` on the paused
// queue). Both requeue the legacy repeatable job with no defa; the other
// fails, at once with lanes (failed, BullMQ's reason), at its next take
// with BullMQ (back in wait with that reason as defa).
export async function srRjkCheck(queue, mode, legacyId, nothingId) {
  const q = new Queue(queue, { connection });
  const redis = new IORedis(connection);
  const base = `bull:${queue}:`;
  const reason = 'job stalled more than allowable limit';
  for (let i = 0; i < 100 && (await redis.exists(base + legacyId + ':lock', base + nothingId + ':lock')); i++)
    await sleep(50);
  if (mode === 'bullmq') {
    const w = new Worker(queue, null, { connection, autorun: false, maxStalledCount: 0, stalledInterval: 100 });
    await w.waitUntilReady();
    await w.backend.moveStalledJobsToWait();
    await sleep(150);
    await w.backend.moveStalledJobsToWait();
    await w.close();
  }
  const state = async id => (await q.getJob(id)).getState();
  for (let i = 0; i < 200 && ((await state(legacyId)) === 'active' || (await state(nothingId)) === 'active'); i++)
    await sleep(50);
  const legacy = await q.getJob(legacyId), nothing = await q.getJob(nothingId);
  const ls = await legacy.getState();
  check(ls === 'waiting' && legacy.stalledCounter === 1 && !legacy.failedReason &&
        (await redis.hget(base + legacyId, 'defa')) === null, `${mode}: the legacy repeatable job requeued`,
        [ls, legacy.stalledCounter, legacy.failedReason]);
  const ns = await nothing.getState(), defa = await redis.hget(base + nothingId, 'defa');
  if (mode === 'bullmq')
    check(ns === 'waiting' && defa === reason, 'bullmq: the other job marked to fail', [ns, defa]);
  else
    check(ns === 'failed' && nothing.failedReason === reason && defa === null,
          'lanes: the other job failed', [ns, nothing.failedReason, defa]);
  await redis.quit();
  await q.close();
  console.log(JSON.stringify({ legacy: ls, nothing: ns }));
}
