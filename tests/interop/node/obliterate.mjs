// node/obliterate.mjs - the BullMQ side of lanes' interop tests of
// `lanes jobs obliterate` (ln_jobs_obliterate) and BullMQ's
// queue.obliterate(): a Node team's queue with something in every key
// BullMQ writes, what each obliterate leaves of it, and a Node Worker
// holding a job while the queue goes.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { readFileSync } from 'node:fs';
import { Queue, Worker, FlowProducer, MetricsTime } from 'bullmq';
import IORedis from 'ioredis';
import { connection, check, sleep, until } from './common.mjs';

const STATES = ['active', 'completed', 'delayed', 'failed', 'prioritized', 'waiting',
  'waiting-children', 'paused'];

// The keys of queue ("bull:<queue>:*"), without that prefix, sorted.
async function queueKeys(queue) {
  const c = new IORedis(connection);
  const prefix = `bull:${queue}:`;
  const out = new Set();
  let cursor = '0';
  do {
    const [next, keys] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) out.add(key.slice(prefix.length));
  } while (cursor !== '0');
  await c.quit();
  return [...out].sort();
}

// A Node Worker on queue runs job id (10 s); it must end completed.
async function runsToCompletion(queue, id, what) {
  const q = new Queue(queue, { connection });
  const w = new Worker(queue, async job => job.name, { connection, drainDelay: 1 });
  await until(async () => (await q.getJob(id))?.finishedOn, 10000, `${what} never ran`,
              async () => (await q.getJob(id))?.getState());
  check(await (await q.getJob(id)).getState() === 'completed', what,
        await (await q.getJob(id)).getState());
  await w.close();
  await q.close();
}

// A Node Worker completes one new job of queue (10 s), its result checked.
async function runsFresh(queue, name) {
  const q = new Queue(queue, { connection });
  const w = new Worker(queue, async job => ({ fresh: job.name }), { connection, drainDelay: 1 });
  const job = await q.add(name, { n: 1 });
  await until(async () => (await q.getJob(job.id))?.finishedOn, 10000,
              `the new job of ${queue} never finished`,
              async () => (await q.getJob(job.id))?.getState());
  const done = await q.getJob(job.id);
  check(await done.getState() === 'completed' && done.returnvalue?.fresh === name,
        `the new job of ${queue} did not complete`, [await done.getState(), done.returnvalue]);
  await w.close();
  await q.close();
}

// A Node team's queue with every kind of key BullMQ writes: completed jobs
// (with logs; "kept" still holds TTL deduplication id "dttl") and failed
// ones, run by a Worker counting metrics under a rate limit (so "limiter"
// and the four metrics keys exist: the metrics' last minute is moved two
// minutes back between two batches, so the second pushes points), a
// global concurrency; then, the Worker gone, waiting jobs (one with
// logs), a delayed, a prioritized one, one holding deduplication id "dd",
// job scheduler "tick" (every minute) and the only child of flow parent
// "parent" in queue <queue>p. flags, comma-separated: "own" adds flow
// parent "own-parent" in this queue waiting for its child in <queue>k
// (lanes' obliterate removes it, BullMQ's leaves it); "stale"
// deduplication id "stale" whose job was removed when it completed (its
// TTL key stays: both obliterates leave it); "cancel" lanes' own key
// lanes:cancel as a cancel of an active job writes it (cancel.lua: a mark
// in ms, one day's expiry). Fails unless each of these keys exists.
// Prints the flow ids.
export async function obSetup(queue, flags = '') {
  const f = new Set(flags.split(',').filter(Boolean));
  const q = new Queue(queue, { connection });
  await q.setGlobalConcurrency(4);
  const w = new Worker(queue, async job => {
    await job.log(`ran ${job.name}`);
    if (job.name === 'bad') throw new Error('bad');
    return { ok: job.name };
  }, { connection, drainDelay: 1, metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
       limiter: { max: 1000, duration: 600000 } });
  w.on('failed', () => {});
  const counts = () => q.getJobCounts('completed', 'failed', 'waiting', 'active');
  const ran = (completed, failed) => until(async () => {
    const c = await counts();
    return c.completed === completed && c.failed === failed && c.waiting + c.active === 0;
  }, 10000, 'the Node Worker did not finish the setup jobs', counts);
  await q.add('good', {});
  await q.add('bad', {});
  await q.add('kept', {}, { deduplication: { id: 'dttl', ttl: 60000 } });
  if (f.has('stale')) {
    await q.add('gone', {}, { deduplication: { id: 'stale', ttl: 600000 }, removeOnComplete: true });
  }
  await ran(2, 1);
  // The metrics' points are pushed once a minute has passed since the
  // last (prevTS): two minutes back, the next outcomes push them.
  const c = new IORedis(connection);
  for (const m of ['completed', 'failed']) {
    await c.hset(`bull:${queue}:metrics:${m}`, 'prevTS', String(Date.now() - 120000));
  }
  await c.quit();
  await q.add('good', {});
  await q.add('bad', {});
  await ran(3, 2);
  await w.close();
  const logged = await q.add('logged', { n: 1 });
  await logged.log('a line');
  await q.add('waiting', { n: 2 });
  await q.add('later', {}, { delay: 60000 });
  await q.add('prio', {}, { priority: 5 });
  await q.add('dedup', {}, { deduplication: { id: 'dd' } });
  await q.upsertJobScheduler('tick', { every: 60000 }, { name: 'tick', data: {} });
  const fp = new FlowProducer({ connection });
  const other = await fp.add({ name: 'parent', queueName: `${queue}p`, data: {},
                               children: [{ name: 'kid', queueName: queue, data: {} }] });
  let own;
  if (f.has('own')) {
    own = await fp.add({ name: 'own-parent', queueName: queue, data: {},
                         children: [{ name: 'far-kid', queueName: `${queue}k`, data: {} }] });
  }
  await fp.close();
  if (f.has('cancel')) {
    const c = new IORedis(connection);
    await c.set(`bull:${queue}:lanes:cancel`, String(Date.now()), 'PX', 86400000);
    await c.quit();
  }
  await q.close();
  const keys = await queueKeys(queue);
  const want = ['completed', 'delayed', 'de:dd', 'de:dttl', 'events', 'failed', 'id',
    'limiter', 'marker', 'meta', 'metrics:completed', 'metrics:completed:data', 'metrics:failed',
    'metrics:failed:data', 'pc', 'prioritized', 'repeat', 'repeat:tick', 'wait'];
  if (f.has('own')) want.push('waiting-children');
  if (f.has('stale')) want.push('de:stale');
  if (f.has('cancel')) want.push('lanes:cancel');
  const missing = want.filter(k => !keys.includes(k));
  check(missing.length === 0, 'the setup lacks keys', { missing, keys });
  check(keys.filter(k => k.endsWith(':logs')).length >= 4, 'the setup lacks job logs', keys);
  console.log(JSON.stringify({ parent: other.job.id, own: own?.job.id, farKid: own?.children[0].job.id,
                               keys: keys.length }));
}

// After `lanes jobs obliterate` of an obSetup queue: no key of it is left
// (looked for before any Queue of it is opened: a Queue writes "meta" as
// it connects); getJobCounts all 0, no job scheduler, deduplication ids
// "dd" and "dttl" free; flow parent parentId in <queue>p released to wait
// (a Node Worker then completes it). With farKid (flags "own"): the child
// in <queue>k of the removed "own-parent" completes under a Node Worker
// and writes nothing back into the queue. Then the queue works afresh: a
// new job added and completed by a Node Worker.
export async function obCheck(queue, parentId, farKid) {
  const left = await queueKeys(queue);
  check(left.length === 0, `keys of bull:${queue}: left by the obliterate`, left);
  const q = new Queue(queue, { connection, skipMetasUpdate: true });
  const counts = await q.getJobCounts(...STATES);
  check(Object.values(counts).every(n => n === 0), 'jobs left', counts);
  const scheds = await q.getJobSchedulers();
  check(scheds.length === 0, 'job schedulers left', scheds);
  for (const id of ['dd', 'dttl']) {
    const holder = await q.getDeduplicationJobId(id);
    check(holder === null || holder === undefined, `deduplication id ${id} still held`, holder);
  }
  await q.close();
  const p = new Queue(`${queue}p`, { connection });
  const parent = await p.getJob(parentId);
  check(await parent?.getState() === 'waiting', 'the parent in the other queue was not released',
        await parent?.getState());
  check(await p.getWaitingChildrenCount() === 0, 'parents left waiting for children',
        await p.getWaitingChildrenCount());
  await p.close();
  await runsToCompletion(`${queue}p`, parentId, 'the released parent');
  if (farKid) {
    await runsToCompletion(`${queue}k`, farKid, 'the far child');
    const again = await queueKeys(queue);
    check(again.length === 0, 'the far child of the removed parent wrote keys of the queue', again);
  }
  await runsFresh(queue, 'fresh');
  console.log(JSON.stringify({ counts, parent: 'completed' }));
}

// BullMQ's queue.obliterate() of queue (with force when given "force").
export async function obNode(queue, force) {
  const q = new Queue(queue, { connection });
  await q.obliterate({ force: force === 'force' });
  await q.close();
  console.log(JSON.stringify({ obliterated: queue }));
}

// What BullMQ's obliterate left of queue a (and of <a>p, where the flow
// parent went) against what lanes' left of b (and <b>p): the same keys,
// but lanes:cancel, lanes' own key, which lanes' deletes and BullMQ's does
// not know, and limiter, the rate limit's window count (its expiry the
// limit's duration), which BullMQ's obliterate does not delete either; in
// <a>p and <b>p the same keys (the parent's id written "PARENT") and the
// parent waiting. Prints both sets (without the queue prefixes) and the
// events of <a>p and <b>p (not compared: lanes' release of the parent
// adds "waiting", as its drain's does; BullMQ's obliterate adds none);
// fails on another difference.
export async function obSame(a, b) {
  const ka = await queueKeys(a), kb = await queueKeys(b);
  const known = ['lanes:cancel', 'limiter'];
  const onlyA = ka.filter(k => !kb.includes(k)), onlyB = kb.filter(k => !ka.includes(k));
  const parent = async name => {
    const q = new Queue(name, { connection, skipMetasUpdate: true });
    const jobs = await q.getJobs(STATES, 0, -1);
    const states = await Promise.all(jobs.map(async j => `${j.name}:${await j.getState()}`));
    await q.close();
    const ids = jobs.map(j => j.id);
    const keys = (await queueKeys(name)).map(k => (ids.includes(k) ? 'PARENT' : k)).sort();
    const c = new IORedis(connection);
    const events = (await c.xrange(`bull:${name}:events`, '-', '+')).map(([, f]) => f[1]);
    await c.quit();
    return { states: states.sort(), keys, events };
  };
  const pa = await parent(`${a}p`), pb = await parent(`${b}p`);
  const out = { node: ka, lanes: kb, nodeParentQueue: pa, lanesParentQueue: pb };
  check(onlyB.length === 0 && onlyA.every(k => known.includes(k)),
        'the obliterates left different keys', { onlyNode: onlyA, onlyLanes: onlyB, ...out });
  check(JSON.stringify(pa.keys) === JSON.stringify(pb.keys), 'the parent queues have different keys',
        out);
  check(pa.states.join() === 'parent:waiting' && pb.states.join() === 'parent:waiting',
        'the parents were not released alike', out);
  console.log(JSON.stringify({ ...out, onlyNode: onlyA }));
}

// The job counts of queue and whether it is paused, one JSON line.
export async function obState(queue) {
  const q = new Queue(queue, { connection, skipMetasUpdate: true });
  const counts = await q.getJobCounts(...STATES);
  const paused = await q.isPaused();
  await q.close();
  console.log(JSON.stringify({ counts, paused }));
}

// After an obliterate refused for active jobs: the counts are still those
// of beforeFile (obState's line), and the queue is paused.
export async function obRefused(queue, beforeFile) {
  const before = JSON.parse(readFileSync(beforeFile, 'utf8'));
  const q = new Queue(queue, { connection, skipMetasUpdate: true });
  const counts = await q.getJobCounts(...STATES);
  check(JSON.stringify(counts) === JSON.stringify(before.counts), 'the refused obliterate changed jobs',
        { before: before.counts, after: counts });
  check(await q.isPaused(), 'the refused obliterate did not leave the queue paused');
  await q.close();
  console.log(JSON.stringify({ counts, paused: true }));
}

// A Node Worker (concurrency 1) holding job "held" of queue, its processor
// waiting on a promise; says "held <id>" on stderr once it runs, and then
// a waiting and a delayed job are added beside it. On SIGTERM the
// processor returns; then, within 5 s, the Worker's 'completed', 'failed'
// and 'error' events are gathered until one came (and 500 ms more), and
// printed with the held job's id.
export async function obHold(queue) {
  const q = new Queue(queue, { connection });
  let release;
  const held = new Promise(r => { release = r; });
  let running;
  const started = new Promise(r => { running = r; });
  const seen = { completed: [], failed: [], error: [] };
  const w = new Worker(queue, async job => { running(job.id); await held; return 'late'; },
                       { connection, concurrency: 1, drainDelay: 1 });
  w.on('completed', job => seen.completed.push(job.id));
  w.on('failed', (job, err) => seen.failed.push([job?.id, err.message]));
  w.on('error', err => seen.error.push(err.message));
  const job = await q.add('held', {});
  const id = await Promise.race([started, sleep(10000)]);
  check(id === job.id, 'the Node Worker never took the job', id);
  await q.add('waiting', {});
  await q.add('later', {}, { delay: 60000 });
  await q.close();
  const stop = new Promise(r => process.on('SIGTERM', r));
  console.error(`held ${id}`);
  await stop;
  release();
  const t0 = Date.now();
  const outcomes = () => seen.completed.length + seen.failed.length + seen.error.length;
  while (outcomes() === 0 && Date.now() - t0 < 5000) await sleep(50);
  await sleep(500);
  await Promise.race([w.close(), sleep(5000)]);
  console.log(JSON.stringify({ id, ...seen }));
}

// After `lanes jobs obliterate --force` took job id from a Node Worker:
// the job hash is gone and no key of the queue is left (when: said in the
// failure, e.g. "after the processor returned", when the Worker's
// moveToFinished found the job gone). Prints the keys found.
export async function obGone(queue, id, when) {
  const c = new IORedis(connection);
  const exists = await c.exists(`bull:${queue}:${id}`);
  await c.quit();
  check(exists === 0, `job ${id} exists ${when ?? ''}`);
  const left = await queueKeys(queue);
  check(left.length === 0, `keys of bull:${queue}: left ${when ?? ''}`, left);
  console.log(JSON.stringify({ id, left }));
}
