// interop.mjs - the BullMQ side of lanes' Redis interop tests
// (tests/test_redis_interop.sh). Stock bullmq 6.7.0 from package-lock.json.
//
//   node interop.mjs <command> <queue> [args...]
//
// Redis comes from LANES_TEST_REDIS_URL (redis://HOST:PORT/DB). Every
// command prints one JSON line on success and exits 0; a failed check
// prints the reason on stderr and exits 1.
import { Queue, Worker, QueueEvents, FlowProducer } from 'bullmq';
import { readFileSync, appendFileSync, writeFileSync } from 'node:fs';

const url = new URL(process.env.LANES_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0');
const connection = {
  host: url.hostname,
  port: Number(url.port || 6379),
  db: Number(url.pathname.slice(1) || 0),
  maxRetriesPerRequest: null,
};

function fail(msg, extra) {
  console.error(`interop: ${msg}${extra === undefined ? '' : ' ' + JSON.stringify(extra)}`);
  process.exit(1);
}

function check(cond, msg, extra) {
  if (!cond) fail(msg, extra);
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

// The handler both sides implement (tests/redis_peer.c has the C twin):
// "flaky" fails its first two attempts, "doomed" always fails, others
// return {name, data}.
async function handler(job) {
  if (job.name === 'flaky' && job.attemptsMade < 2)
    throw new Error(`flaky attempt ${job.attemptsMade + 1}`);
  if (job.name === 'doomed') throw new Error('doomed');
  return { name: job.name, data: job.data };
}

// The jobs of scenario 1, added the BullMQ way. Delays are short so the
// run stays quick; backoff is exponential (100, 200 ms).
async function produce(queue) {
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
async function summarize(queue) {
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
async function work(queue, concurrency = 1, log = '', opts = {}) {
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
async function serve(queue, log) {
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

async function waitIdle(queue, timeoutMs = 90000) {
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

// Records the events stream of a queue (QueueEvents) until SIGTERM, then
// prints, per job id, the list of event names it saw.
async function events(queue) {
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
function compare(a, b) {
  const norm = v => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
    ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => (p < q ? -1 : 1))) : x));
  const [x, y] = [a, b].map(f => norm(JSON.parse(readFileSync(f, 'utf8'))));
  if (x !== y) fail(`${a} and ${b} differ`, { [a]: JSON.parse(x), [b]: JSON.parse(y) });
  console.log(JSON.stringify({ same: true }));
}

// Bull Board (@bull-board/api + express) on a loopback port: its HTTP API
// must list the queue with the jobs and data lanes wrote.
async function startBoard(queue) {
  const express = (await import('express')).default;
  const { createBullBoard } = await import('@bull-board/api');
  const { BullMQAdapter } = await import('@bull-board/api/bullMQAdapter');
  const { ExpressAdapter } = await import('@bull-board/express');
  const q = new Queue(queue, { connection });
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath('/ui');
  createBullBoard({ queues: [new BullMQAdapter(q)], serverAdapter });
  const app = express();
  app.use('/ui', serverAdapter.getRouter());
  const server = await new Promise(r => { const s = app.listen(0, '127.0.0.1', () => r(s)); });
  const base = `http://127.0.0.1:${server.address().port}/ui`;
  return { server, base, q };
}

async function board(queue, expectJobs) {
  const { server, base, q } = await startBoard(queue);
  try {
    const res = await fetch(`${base}/api/queues?activeQueue=${queue}&status=latest&page=1&jobsPerPage=50`);
    check(res.ok, `GET /api/queues: HTTP ${res.status}`);
    const body = await res.json();
    const entry = body.queues.find(x => x.name === queue);
    check(entry, 'queue not listed', body.queues.map(x => x.name));
    const total = Object.values(entry.counts).reduce((s, n) => s + n, 0);
    check(total === Number(expectJobs), 'job counts', entry.counts);
    check(entry.jobs.length === Number(expectJobs), 'jobs listed', entry.jobs.length);
    const plain = entry.jobs.find(j => j.id === '1');
    check(plain && plain.name === 'plain' && plain.data.s === 'héllo', 'job 1 data', plain);
    const one = await (await fetch(`${base}/api/queues/${queue}/cust-1`)).json();
    check(one.job && one.job.data.c === 1 && one.job.opts.jobId === 'cust-1', 'job cust-1', one);
    console.log(JSON.stringify({ listed: entry.jobs.length, counts: entry.counts }));
  } finally {
    server.close();
    await q.close();
  }
}

// Bull Board's workers panel for a queue a C worker is running on.
async function boardWorkers(queue) {
  const { server, base, q } = await startBoard(queue);
  try {
    const res = await fetch(`${base}/api/queues/${queue}/workers`);
    check(res.ok, `GET workers: HTTP ${res.status}`);
    const { workers } = await res.json();
    check(Array.isArray(workers) && workers.some(w => /^lanes-/.test(w.name ?? '')),
      'no lanes worker listed', workers);
    console.log(JSON.stringify({ workers: workers.map(w => w.name) }));
  } finally {
    server.close();
    await q.close();
  }
}

// Trace context across the queue, both ways: BullMQ's telemetry stores the
// propagation carrier as opts.tm (JobsOptions.telemetry.metadata).
async function traceProduce(queue, traceparent) {
  const q = new Queue(queue, { connection });
  const metadata = JSON.stringify({ traceparent, tracestate: 'lanes=test' });
  const job = await q.add('trace', {}, { telemetry: { metadata } });
  await q.close();
  console.log(JSON.stringify({ id: job.id }));
}

async function traceCheck(queue, traceparent) {
  const q = new Queue(queue, { connection });
  const fromNode = await q.getJob('1');
  check(fromNode?.returnvalue?.traceparent === traceparent, 'C worker saw', fromNode?.returnvalue);
  check(fromNode.returnvalue.tracestate === 'lanes=test', 'tracestate', fromNode.returnvalue);
  const fromC = await q.getJob('c-trace');
  const carrier = JSON.parse(fromC?.opts?.telemetry?.metadata ?? '{}');
  check(carrier.traceparent === traceparent, 'C job carrier', fromC?.opts);
  await q.close();
  console.log(JSON.stringify({ traceparent }));
}

// JSON that only JSON.parse's grammar bounds: a number past 64 bits and a
// lone surrogate (JSON.stringify writes 100000000000000000000, "\ud800").
const jsonData = { x: 1e20, s: '\ud800' };

async function jsonProduce(queue) {
  const q = new Queue(queue, { connection });
  await q.add('echo', jsonData, { jobId: 'echo' });
  await q.add('big', {}, { jobId: 'big' });
  await q.close();
  console.log(JSON.stringify({ added: 2 }));
}

// mode "c": redis_peer's handler returned {name, data}; "exec": `lanes
// worker --exec` echoed the data and printed a big-number object for "big".
async function jsonCheck(queue, mode) {
  const q = new Queue(queue, { connection });
  const echo = await q.getJob('echo');
  check(await echo?.getState() === 'completed', 'echo not completed', echo?.failedReason);
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  check(same(echo.data, jsonData), 'data changed', echo.data);
  const rv = mode === 'exec' ? echo.returnvalue : echo.returnvalue?.data;
  check(same(rv, jsonData), 'returnvalue is not the data', echo.returnvalue);
  check(rv.s === '\ud800' && rv.x === 1e20, 'returnvalue fields', rv);
  if (mode === 'exec') {
    const big = await q.getJob('big');
    check(big?.returnvalue?.ok === true, 'big: returnvalue.ok', big?.returnvalue);
    check(big.returnvalue.total === 1e20, 'big: returnvalue.total', big.returnvalue);
  }
  await q.close();
  console.log(JSON.stringify({ mode, returnvalue: rv }));
}

// Global concurrency: set the queue's limit, add n "sleep" jobs at once and
// sample the active count every 5 ms until all completed; prints the time
// from the add to the last completion and the most jobs seen active.
async function globalConcurrency(queue, limit, n, timeoutMs = 60000) {
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

// One job added the BullMQ way: name, data JSON, JobsOptions JSON.
async function addOne(queue, name, data, opts) {
  const q = new Queue(queue, { connection });
  const job = await q.add(name, JSON.parse(data), JSON.parse(opts ?? '{}'));
  await q.close();
  console.log(JSON.stringify({ id: job.id }));
}

// One job as BullMQ reads it: state and the fields the outcome cases
// check (null when there is no such job).
async function jobInfo(queue, id) {
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
async function obliterate(queue) {
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
async function waitFinished(queue, name, data, readyFile) {
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

// Node's Queue.getWorkers(): the names of the connections it lists
// (rawname) and getWorkersCount(), as one JSON line.
async function getWorkers(queue) {
  const q = new Queue(queue, { connection });
  const workers = await q.getWorkers();
  const count = await q.getWorkersCount();
  await q.close();
  console.log(JSON.stringify({ count, names: workers.map(w => w.rawname) }));
}

// Two idle BullMQ Workers on queue, one named 'nodew' and one unnamed,
// until SIGTERM; "ready" on stderr once both connected.
async function idleWorkers(queue) {
  const named = new Worker(queue, handler, { connection, name: 'nodew' });
  const plain = new Worker(queue, handler, { connection });
  await named.waitUntilReady();
  await plain.waitUntilReady();
  console.error('ready');
  await new Promise(resolve => process.once('SIGTERM', resolve));
  await named.close();
  await plain.close();
  console.log(JSON.stringify({ closed: 2 }));
}

// queue.getMetrics for both types, as Bull Board's chart reads them:
// {completed: {meta, data, count}, failed: {...}}.
async function metrics(queue) {
  const q = new Queue(queue, { connection });
  const out = { completed: await q.getMetrics('completed'), failed: await q.getMetrics('failed') };
  await q.close();
  console.log(JSON.stringify(out));
}

// A cancel from lanes (`lanes jobs cancel` in the shell) seen from Node:
// add a job named name with 3 attempts (QueueEvents ready first), append
// its id to readyFile (with holder "node": a Node Worker runs it, and its
// processor appends the id once it runs and returns only after the
// cancel), and wait for its "failed" event: failedReason "canceled", one
// attempt made, no retry. A Node holder's late outcome is refused by
// BullMQ (an 'error' on the worker), the job stays failed, and the worker
// then completes another job.
async function cancelSeen(queue, name, readyFile, holder) {
  const q = new Queue(queue, { connection });
  const qe = new QueueEvents(queue, { connection });
  await qe.waitUntilReady();
  const job = await q.add(name, { c: 1 }, { attempts: 3 });
  const failed = new Promise(resolve => qe.on('failed', a => {
    if (a.jobId === job.id) resolve(a.failedReason);
  }));
  let worker = null, errors = 0;
  if (holder === 'node') {
    worker = new Worker(queue, async j => {
      if (j.id !== job.id) return handler(j);
      appendFileSync(readyFile, `${j.id}\n`);
      await failed;
      await sleep(200);
      return 'late';
    }, { connection });
    worker.on('error', () => { errors++; });
  } else {
    appendFileSync(readyFile, `${job.id}\n`);
  }
  const reason = await Promise.race([failed, sleep(20000).then(() => 'no failed event')]);
  check(reason === 'canceled', 'failed event reason', reason);
  if (worker) {
    await sleep(600); // the processor's late outcome, refused
    const after = await q.add('plain', { a: 1 });
    const result = await after.waitUntilFinished(qe, 10000);
    check(JSON.stringify(result) === JSON.stringify({ name: 'plain', data: { a: 1 } }),
          'the Node worker went on', result);
    await worker.close();
  }
  const again = await q.getJob(job.id);
  const state = await again.getState();
  check(state === 'failed' && again.failedReason === 'canceled' && again.attemptsMade === 1,
        'the canceled job', { state, failedReason: again.failedReason, attemptsMade: again.attemptsMade });
  await qe.close();
  await q.close();
  console.log(JSON.stringify({ id: job.id, state, errors }));
}

// Job schedulers (the sched_* cases). Upsert scheduler id with repeat
// options (JSON) and a job template named "tick" with data (JSON).
async function schedUpsert(queue, id, repeat, data) {
  const q = new Queue(queue, { connection });
  const job = await q.upsertJobScheduler(id, JSON.parse(repeat),
                                         { name: 'tick', data: JSON.parse(data ?? '{}') });
  await q.close();
  console.log(JSON.stringify({ id: job ? job.id : null }));
}

// Scheduler id as BullMQ reads it after some worker ran it: at least min
// iterations completed, each "repeat:<id>:<ms>" with the template's data
// and BullMQ's repeat fields (repeatJobKey, opts.repeat.count counting 1,
// 2, ...), at least gap ms apart (and on multiples of align, if given);
// and the scheduler still has its current iteration pending, so it keeps
// producing. Prints the count.
async function schedCheck(queue, id, min, gap, data, align) {
  const q = new Queue(queue, { connection });
  const prefix = `repeat:${id}:`;
  const done = (await q.getJobs(['completed'], 0, -1, true)).filter(j => j.id.startsWith(prefix));
  check(done.length >= Number(min), `only ${done.length} iterations completed`, done.map(j => j.id));
  done.sort((a, b) => Number(a.id.slice(prefix.length)) - Number(b.id.slice(prefix.length)));
  let prev = null;
  for (const j of done) {
    const ms = Number(j.id.slice(prefix.length));
    check(j.repeatJobKey === id, 'repeatJobKey', { id: j.id, rjk: j.repeatJobKey });
    check(JSON.stringify(j.data) === JSON.stringify(JSON.parse(data)), 'data', j.data);
    check(j.opts.repeat && (j.opts.repeat.every || j.opts.prevMillis === ms),
          'opts.repeat / prevMillis', j.opts); // (BullMQ sets prevMillis for patterns only)
    check(!align || ms % Number(align) === 0, 'not aligned', ms);
    if (prev) {
      check(ms - prev.ms >= Number(gap), 'iterations too close', [prev.ms, ms]);
      check(j.opts.repeat.count === prev.count + 1, 'repeat.count', [prev.count, j.opts.repeat]);
    }
    prev = { ms, count: j.opts.repeat.count };
  }
  const s = await q.getJobScheduler(id);
  check(s && s.next, 'scheduler gone', s);
  const pending = await q.getJob(`${prefix}${s.next}`);
  check(pending, 'no pending iteration', s);
  const state = await pending.getState();
  check(['delayed', 'waiting', 'prioritized', 'active'].includes(state), 'pending state', state);
  check(s.iterationCount >= done.length, 'iterationCount', s);
  await q.close();
  console.log(JSON.stringify({ iterations: done.length, next: s.next, state, ic: s.iterationCount }));
}

// Rate limits (tests/test_redis_interop.sh ratelimit*). n jobs named
// "plain" added at once.
async function rlAdd(queue, n) {
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
async function rlWork(queue, max, duration, n) {
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
async function rlCheck(queue, max, duration, n) {
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
async function rlNode(queue, cli, redisUrl) {
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
async function rlMeta(queue, conc, max, duration) {
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
async function rlError(queue, id) {
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

// Flows. The tree both directions use, as FlowProducer.add takes it (and
// `lanes jobs flow` reads it): a root in <queue>-p with three children in
// <queue>-c, the first with a child of its own; a root whose child
// "doomed" has failParentOnFailure; and one whose "doomed" child has
// ignoreDependencyOnFailure.
function flowTrees(queue) {
  const p = `${queue}-p`, c = `${queue}-c`;
  return [
    { name: 'root', queueName: p, data: { r: 1 }, children: [
      { name: 'mid', queueName: c, data: { m: 1 }, children: [
        { name: 'leaf', queueName: c, data: { l: 1 } }] },
      { name: 'kid', queueName: c, data: { k: 2 } },
      { name: 'kid', queueName: c, data: { k: 3 } }] },
    { name: 'root2', queueName: p, data: { r: 2 }, children: [
      { name: 'doomed', queueName: c, data: {}, opts: { failParentOnFailure: true } },
      { name: 'kid', queueName: c, data: { k: 4 } }] },
    { name: 'root3', queueName: p, data: { r: 3 }, children: [
      { name: 'doomed', queueName: c, data: {}, opts: { ignoreDependencyOnFailure: true } },
      { name: 'kid', queueName: c, data: { k: 5 } }] },
  ];
}

// flow-add: add both trees with FlowProducer; prints the roots' ids.
// flow-json FILE1 FILE2: write them for `lanes jobs flow` instead.
async function flowAdd(queue) {
  const fp = new FlowProducer({ connection });
  const [t1, t2, t3] = flowTrees(queue);
  const a = await fp.add(t1), b = await fp.add(t2), c = await fp.add(t3);
  await fp.close();
  console.log(JSON.stringify({ ok: a.job.id, bad: b.job.id, ign: c.job.id }));
}

// flow-check OK BAD IGN: root OK completed with every child's value
// (getChildrenValues, keyed by the children's full keys), its child mid
// too; root BAD failed for its failParentOnFailure child; root IGN
// completed with its ignored child's reason in getFailedChildrenValues.
async function flowCheck(queue, okId, badId, ignId) {
  const q = new Queue(`${queue}-p`, { connection });
  const ok = await q.getJob(okId);
  check(ok, 'no root job', okId);
  const state = await ok.getState();
  check(state === 'completed', 'root state', state);
  check(JSON.stringify(ok.returnvalue) === JSON.stringify({ name: 'root', data: { r: 1 } }),
        'root result', ok.returnvalue);
  const vals = await ok.getChildrenValues();
  const keys = Object.keys(vals);
  check(keys.length === 3, 'root children', vals);
  check(keys.every(k => k.startsWith(`bull:${queue}-c:`)), 'child keys', keys);
  const got = Object.values(vals).map(v => JSON.stringify(v)).sort();
  const want = [{ name: 'kid', data: { k: 2 } }, { name: 'kid', data: { k: 3 } },
                { name: 'mid', data: { m: 1 } }].map(v => JSON.stringify(v)).sort();
  check(JSON.stringify(got) === JSON.stringify(want), 'root children values', got);
  const deps = await ok.getDependenciesCount();
  check(deps.unprocessed === 0 && deps.processed === 3, 'root dependency counts', deps);
  const midKey = keys.find(k => vals[k].name === 'mid');
  const cq = new Queue(`${queue}-c`, { connection });
  const mid = await cq.getJob(midKey.slice(`bull:${queue}-c:`.length));
  const midVals = Object.values(await mid.getChildrenValues());
  check(midVals.length === 1 && midVals[0].name === 'leaf', 'mid children values', midVals);
  const bad = await q.getJob(badId);
  const badState = await bad.getState();
  check(badState === 'failed', 'fail-parent root state', badState);
  check(/^child bull:.*-c:.* failed$/.test(bad.failedReason), 'fail-parent reason',
        bad.failedReason);
  const ign = await q.getJob(ignId);
  const ignState = await ign.getState();
  check(ignState === 'completed', 'ignore-dependency root state', ignState);
  const ignVals = Object.values(await ign.getChildrenValues());
  check(ignVals.length === 1 && ignVals[0].data.k === 5, 'ignore-dependency values', ignVals);
  const failed = Object.values(await ign.getFailedChildrenValues());
  check(failed.length === 1 && /doomed/.test(failed[0]), 'ignored failure', failed);
  await cq.close();
  await q.close();
  console.log(JSON.stringify({ ok: okId, children: keys.length, bad: bad.failedReason }));
}

const [cmd, queue, ...args] = process.argv.slice(2);
check(queue, 'usage: node interop.mjs <command> <queue> [args]');
switch (cmd) {
  case 'produce': await produce(queue); break;
  case 'summarize': console.log(JSON.stringify(await summarize(queue))); break;
  case 'work': await work(queue, args[0], args[1], JSON.parse(args[2] ?? '{}')); break;
  case 'serve': await serve(queue, args[0]); break;
  case 'counts': {
    const q = new Queue(queue, { connection });
    console.log(JSON.stringify(await q.getJobCounts()));
    await q.close();
    break;
  }
  case 'events': await events(queue); break;
  case 'compare': compare(queue, args[0]); break;
  case 'board': await board(queue, args[0]); break;
  case 'board-workers': await boardWorkers(queue); break;
  case 'trace-produce': await traceProduce(queue, args[0]); break;
  case 'trace-check': await traceCheck(queue, args[0]); break;
  case 'json-produce': await jsonProduce(queue); break;
  case 'json-check': await jsonCheck(queue, args[0]); break;
  case 'global-concurrency': await globalConcurrency(queue, args[0], args[1]); break;
  case 'obliterate': await obliterate(queue); break;
  case 'add-one': await addOne(queue, args[0], args[1], args[2]); break;
  case 'job': await jobInfo(queue, args[0]); break;
  case 'wait-finished': await waitFinished(queue, args[0], args[1], args[2]); break;
  case 'get-workers': await getWorkers(queue); break;
  case 'idle-workers': await idleWorkers(queue); break;
  case 'metrics': await metrics(queue); break;
  case 'cancel-seen': await cancelSeen(queue, args[0], args[1], args[2]); break;
  case 'sched-upsert': await schedUpsert(queue, args[0], args[1], args[2]); break;
  case 'sched-check': await schedCheck(queue, args[0], args[1], args[2], args[3], args[4]); break;
  case 'rl-add': await rlAdd(queue, args[0]); break;
  case 'rl-work': await rlWork(queue, args[0], args[1], args[2]); break;
  case 'rl-check': await rlCheck(queue, args[0], args[1], args[2]); break;
  case 'rl-node': await rlNode(queue, args[0], args[1]); break;
  case 'rl-meta': await rlMeta(queue, args[0], args[1], args[2]); break;
  case 'rl-error': await rlError(queue, args[0]); break;
  case 'flow-add': await flowAdd(queue); break;
  case 'flow-json': {
    flowTrees(queue).forEach((t, i) => writeFileSync(args[i], JSON.stringify(t)));
    console.log(JSON.stringify({ written: 3 }));
    break;
  }
  case 'flow-check': await flowCheck(queue, args[0], args[1], args[2]); break;
  default: fail(`unknown command ${cmd}`);
}
process.exit(0);
