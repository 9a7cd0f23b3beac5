// node/jobs.mjs - the BullMQ side of lanes' interop tests: jobs added and run
// both ways: the scenario's jobs, what BullMQ reports about them, its Worker
// and QueueEvents, one job added or read, waitUntilFinished, obliterate.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker, QueueEvents } from 'bullmq';
import { readFileSync, appendFileSync } from 'node:fs';
import { connection, fail, check, sleep, handler, waitIdle } from './common.mjs';

// The jobs of scenario 1, added the BullMQ way. Delays are short so the
// run stays quick; backoff is exponential (100, 200 ms).
export async function produce(queue) {
  const q = new Queue(queue, { connection });
  const retry = { attempts: 3, backoff: { type: 'exponential', delay: 100 } };
  await q.add('plain', { n: 1, s: 'héllo' });
  await q.add('plain', [1, 2, 3]);
  await q.add('custom', { c: 1 }, { jobId: 'cust-1' });
  await q.add('custom', { c: 2 }, { jobId: 'cust-1' }); // duplicate: ignored
  await q.add('later', { d: 1 }, { delay: 300 });
  await q.add('prio', { p: 5 }, { priority: 5 });
  await q.add('prio', { p: 1 }, { priority: 1 });
  await q.add('lifo', 'a string payload', { lifo: true });
  await q.add('flaky', { f: 1 }, retry);
  await q.add('doomed', { x: 1 }, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
  await q.add('gone', { g: 1 }, { removeOnComplete: true });
  await q.addBulk([
    { name: 'bulk', data: { b: 1 } },
    { name: 'bulk', data: { b: 2 }, opts: { jobId: 'bulk-2' } },
    { name: 'bulk', data: { b: 3 }, opts: { priority: 3 } },
  ]);
  await q.close();
  console.log(JSON.stringify({ added: 14 }));
}

// Everything BullMQ reports about a finished queue, without what differs
// between two runs (times, auto ids order is kept: ids are deterministic).
export async function summarize(queue) {
  const q = new Queue(queue, { connection });
  const counts = await q.getJobCounts();
  const jobs = {};
  for (const state of ['completed', 'failed']) {
    for (const job of await q.getJobs([state], 0, -1, true)) {
      jobs[job.id] = {
        state,
        name: job.name,
        data: job.data,
        returnvalue: job.returnvalue,
        failedReason: job.failedReason || null,
        attemptsMade: job.attemptsMade,
        attemptsStarted: job.attemptsStarted,
        finished: job.finishedOn >= job.timestamp && job.finishedOn >= job.processedOn,
        stacktrace: (job.stacktrace || []).length,
        stalledCounter: job.stalledCounter,
      };
    }
  }
  await q.close();
  return { counts, jobs };
}

// Runs the stock BullMQ Worker until the queue is idle; prints the ids it
// ran, in order. With a log file, appends "<id>\n" per run to it instead.
export async function work(queue, concurrency = 1, log = '', opts = {}) {
  const order = [];
  const w = new Worker(queue, async job => {
    if (log) appendFileSync(log, `${job.id}\n`);
    else order.push(job.id);
    if (job.name === 'noop') return null;
    return handler(job);
  }, { connection, concurrency: Number(concurrency), drainDelay: 1, ...opts });
  await waitIdle(queue);
  await w.close();
  console.log(JSON.stringify({ order }));
}

// A Worker with BullMQ's defaults (drainDelay 5 s: an idle worker blocks
// on the marker that long) until SIGTERM: appends "<id>\n" to log as each
// job starts, and a job named "sleep" takes 500 ms. Says "ready" on stderr
// once it runs.
export async function serve(queue, log) {
  const w = new Worker(queue, async job => {
    appendFileSync(log, `${job.id}\n`);
    if (job.name === 'sleep') await sleep(500);
    return null;
  }, { connection, concurrency: 1 });
  await w.waitUntilReady();
  console.error('ready');
  await new Promise(resolve => process.once('SIGTERM', resolve));
  await w.close();
}

// Records the events stream of a queue (QueueEvents) until SIGTERM, then
// prints, per job id, the list of event names it saw.
export async function events(queue) {
  const qe = new QueueEvents(queue, { connection, autorun: false });
  const seen = {};
  const names = ['added', 'waiting', 'active', 'completed', 'failed', 'delayed',
    'stalled', 'progress', 'retries-exhausted', 'duplicated'];
  for (const name of names) {
    qe.on(name, args => {
      (seen[args.jobId] ??= []).push(name);
      if (name === 'completed') JSON.stringify(args.returnvalue); // parsed by QueueEvents
    });
  }
  qe.run();
  await qe.waitUntilReady();
  console.error('events: ready');
  await new Promise(r => process.once('SIGTERM', r));
  await sleep(200);
  await qe.close();
  console.log(JSON.stringify(seen));
}

// Two summarize outputs (files) must be equal.
export function compare(a, b) {
  const norm = v => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
    ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => (p < q ? -1 : 1))) : x));
  const [x, y] = [a, b].map(f => norm(JSON.parse(readFileSync(f, 'utf8'))));
  if (x !== y) fail(`${a} and ${b} differ`, { [a]: JSON.parse(x), [b]: JSON.parse(y) });
  console.log(JSON.stringify({ same: true }));
}

// One job added the BullMQ way: name, data JSON, JobsOptions JSON.
export async function addOne(queue, name, data, opts) {
  const q = new Queue(queue, { connection });
  const job = await q.add(name, JSON.parse(data), JSON.parse(opts ?? '{}'));
  await q.close();
  console.log(JSON.stringify({ id: job.id }));
}

// One job as BullMQ reads it: state and the fields the outcome cases
// check (null when there is no such job).
export async function jobInfo(queue, id) {
  const q = new Queue(queue, { connection });
  const job = await q.getJob(id);
  const out = job ? {
    id: job.id, state: await job.getState(), data: job.data, attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted, failedReason: job.failedReason || null,
    returnvalue: job.returnvalue ?? null, delay: job.delay, deduplicationId: job.deduplicationId ?? null,
  } : null;
  await q.close();
  console.log(JSON.stringify(out));
}

// Obliterate (force) a queue once a job of it is active.
export async function obliterate(queue) {
  const q = new Queue(queue, { connection });
  const t0 = Date.now();
  while ((await q.getActiveCount()) === 0) {
    if (Date.now() - t0 > 10000) fail('no job became active');
    await sleep(10);
  }
  await q.obliterate({ force: true });
  await q.close();
  console.log(JSON.stringify({ obliterated: queue }));
}

// waitUntilFinished for a job some other worker runs: add a job named
// name (QueueEvents ready first), append its id to readyFile, wait for
// its outcome and check the result is handler()'s.
export async function waitFinished(queue, name, data, readyFile) {
  const q = new Queue(queue, { connection });
  const qe = new QueueEvents(queue, { connection });
  await qe.waitUntilReady();
  const payload = JSON.parse(data);
  const job = await q.add(name, payload);
  appendFileSync(readyFile, `${job.id}\n`);
  const result = await job.waitUntilFinished(qe, 20000);
  check(JSON.stringify(result) === JSON.stringify({ name, data: payload }),
        'waitUntilFinished result', result);
  await qe.close();
  await q.close();
  console.log(JSON.stringify({ id: job.id, result }));
}
// The queue's job counts as BullMQ reads them.
export async function counts(queue) {
  const q = new Queue(queue, { connection });
  console.log(JSON.stringify(await q.getJobCounts()));
  await q.close();
}
