// node/admin.mjs - the BullMQ side of lanes' interop tests of lanes'
// administration of a Node team's queue: what `lanes jobs drain` and
// `lanes jobs clean` leave of job schedulers, deduplication and flows.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker, FlowProducer, QueueEvents } from 'bullmq';
import { connection, check, fail, sleep } from './common.mjs';

// A paused queue as a Node team has it before a drain: the pending
// iteration of scheduler "tick", a delayed job holding deduplication id
// "dttl" (60 s TTL), a waiting one holding "dsimple", a parent waiting for
// a child in queue <queue>k, and one waiting for a child in its own queue.
export async function drainSetup(queue) {
  const q = new Queue(queue, { connection });
  await q.pause();
  await q.upsertJobScheduler('tick', { every: 200 }, { name: 'tick', data: {} });
  await q.add('later', {}, { delay: 60000, deduplication: { id: 'dttl', ttl: 60000 } });
  await q.add('plain', {}, { deduplication: { id: 'dsimple' } });
  const fp = new FlowProducer({ connection });
  const other = await fp.add({ name: 'parent-other', queueName: queue, data: {},
                               children: [{ name: 'kid', queueName: `${queue}k`, data: {} }] });
  const same = await fp.add({ name: 'parent-same', queueName: queue, data: {},
                              children: [{ name: 'kid', queueName: queue, data: {} }] });
  await fp.close();
  await q.close();
  console.log(JSON.stringify({ other: other.job.id, same: same.job.id }));
}

// After `lanes jobs drain` of <queue> and then <queue>k: what BullMQ's
// queue.drain(true) leaves. The scheduler's iteration waits, and once the
// queue is resumed a Node Worker runs it and the schedule goes on; the
// deduplication ids are free (Node's adds add jobs); the parent whose
// child was in the other queue waits and completes; the one whose child
// was in its own queue is removed with it.
export async function drainCheck(queue, otherId, sameId) {
  const q = new Queue(queue, { connection });
  const waiting = await q.getJobs(['wait', 'paused', 'prioritized', 'delayed'], 0, -1);
  const names = waiting.map(j => j.name).sort();
  check(JSON.stringify(names) === '["parent-other","tick"]', 'jobs left by the drain', names);
  check((await q.getJob(sameId)) === undefined, 'the parent of a drained child of its queue is left',
        await (await q.getJob(sameId))?.getState());
  await q.resume();
  const w = new Worker(queue, async job => job.name, { connection, drainDelay: 1 });
  const a = await q.add('later2', {}, { delay: 60000, deduplication: { id: 'dttl', ttl: 60000 } });
  const b = await q.add('plain2', {}, { deduplication: { id: 'dsimple' } });
  check((await q.getJob(a.id))?.name === 'later2', 'a TTL deduplication id of a drained job still held', a.id);
  check((await q.getJob(b.id))?.name === 'plain2', 'a deduplication id of a drained job still held', b.id);
  const t0 = Date.now();
  let ticks = 0;
  while (Date.now() - t0 < 5000) {
    ticks = (await q.getJobs(['completed'], 0, -1)).filter(j => j.name === 'tick').length;
    if (ticks >= 3 && (await q.getJob(otherId))?.finishedOn) break;
    await sleep(100);
  }
  check(ticks >= 3, 'the schedule did not go on after the drain', ticks);
  const parent = await q.getJob(otherId);
  check(await parent?.getState() === 'completed', 'the parent of the drained child',
        await parent?.getState());
  await w.close();
  await q.close();
  console.log(JSON.stringify({ ticks, parent: 'completed' }));
}

// Node flows whose children C workers run in queue <queue>k, for `lanes
// jobs retry` and `lanes jobs clean`: parent "p-retry" waits for "once"
// (ignoreDependencyOnFailure; it fails its first run) and "held" (delayed
// a minute); parent "p-clean" for "doomed" (no failure option: its parent
// waits for it even once it failed, as in BullMQ); and "dd" holds
// deduplication id "dttl" for 60 s.
export async function fixSetup(queue) {
  const fp = new FlowProducer({ connection });
  const kids = `${queue}k`;
  const retry = await fp.add({ name: 'p-retry', queueName: queue, data: {}, children: [
    { name: 'once', queueName: kids, data: {}, opts: { ignoreDependencyOnFailure: true } },
    { name: 'held', queueName: kids, data: {}, opts: { delay: 60000 } }] });
  const clean = await fp.add({ name: 'p-clean', queueName: queue, data: {},
                              children: [{ name: 'doomed', queueName: kids, data: {} }] });
  await fp.close();
  const q = new Queue(kids, { connection });
  const dd = await q.add('dd', {}, { deduplication: { id: 'dttl', ttl: 60000 } });
  await q.close();
  console.log(JSON.stringify({ retry: retry.job.id, once: retry.children[0].job.id,
                               held: retry.children[1].job.id, clean: clean.job.id, doomed: clean.children[0].job.id,
                               dd: dd.id }));
}

// Until job id of queue is in state (10 s).
export async function waitState(queue, id, state) {
  const q = new Queue(queue, { connection });
  const t0 = Date.now();
  let s;
  while ((s = await (await q.getJob(id))?.getState()) !== state) {
    check(Date.now() - t0 < 10000, `job ${id} never ${state}`, s);
    await sleep(50);
  }
  await q.close();
  console.log(JSON.stringify({ id, state }));
}

// After `lanes jobs retry` of "once" (then completed by the C worker) and
// `lanes jobs clean` of <queue>k's completed and failed jobs, as BullMQ's
// job.retry and queue.clean leave them: "once" is again a dependency of
// p-retry, which gets its result and no ignored failure once "held" ran;
// p-clean, its child removed, goes on and completes; "dttl" is free.
export async function fixCheck(queue, retryId, heldId, cleanId) {
  const q = new Queue(queue, { connection });
  const k = new Queue(`${queue}k`, { connection });
  const w = new Worker(queue, async job => job.name, { connection, drainDelay: 1 });
  await (await k.getJob(heldId)).promote();
  const t0 = Date.now();
  const done = async id => (await q.getJob(id))?.finishedOn;
  while (!(await done(retryId) && await done(cleanId)) && Date.now() - t0 < 10000) await sleep(50);
  const pr = await q.getJob(retryId), pc = await q.getJob(cleanId);
  check(await pc?.getState() === 'completed', 'p-clean after its child was cleaned', await pc?.getState());
  check(await pr?.getState() === 'completed', 'p-retry', await pr?.getState());
  const values = Object.values(await pr.getChildrenValues());
  const ignored = await pr.getIgnoredChildrenFailures();
  check(values.length === 2, 'p-retry has not the results of both children', values);
  check(Object.keys(ignored).length === 0, 'the retried child is still an ignored failure', ignored);
  const a = await k.add('dd2', {}, { deduplication: { id: 'dttl', ttl: 60000 } });
  check((await k.getJob(a.id))?.name === 'dd2', 'the deduplication id of a cleaned job still held', a.id);
  await w.close();
  await q.close();
  await k.close();
  console.log(JSON.stringify({ values, ignored }));
}

// A Node team's calls on jobs a C worker (`lanes worker --exec`, running)
// holds or finished: while "slow" runs (it logs "c-log", sleeps 1.2 s,
// sets progress 77, returns {"seen": data}), updateData, updateProgress and
// log land and remove is refused ("locked"); the C worker's result is what
// it read, the data stays Node's update, the logs are both, and
// QueueEvents hears both progresses. A "once" job the C worker failed
// (attempts 1) is retried by job.retry() and completes on its second run.
export async function live(queue) {
  const q = new Queue(queue, { connection });
  const qe = new QueueEvents(queue, { connection });
  await qe.waitUntilReady();
  const progress = [];
  qe.on('progress', ({ jobId, data }) => progress.push([jobId, data]));
  const s = await q.add('slow', { v: 1 });
  const t0 = Date.now();
  while (await s.getState() !== 'active') {
    check(Date.now() - t0 < 5000, 'the C worker never took the job');
    await sleep(20);
  }
  await s.updateData({ v: 2 });
  await s.updateProgress(33);
  await s.log('node-log');
  let refused = '';
  try { await s.remove(); } catch (e) { refused = e.message; }
  check(/locked/.test(refused), 'remove of a job the C worker holds', refused);
  const rv = await s.waitUntilFinished(qe, 10000);
  const after = await q.getJob(s.id);
  check(JSON.stringify(rv) === '{"seen":{"v":1}}', 'returnvalue', rv);
  check(JSON.stringify(after.data) === '{"v":2}', 'data after the run', after.data);
  check(after.progress === 77, 'progress', after.progress);
  const logs = await q.getJobLogs(s.id);
  check(JSON.stringify(logs.logs.slice().sort()) === '["c-log","node-log"]', 'logs', logs);
  await sleep(100);
  const mine = progress.filter(([id]) => id === s.id).map(([, d]) => d);
  check(JSON.stringify(mine) === '[33,77]', 'QueueEvents progress', mine);
  const f = await q.add('once', { n: 1 });
  await f.waitUntilFinished(qe, 10000).then(() => fail('"once" completed on its first run'), () => {});
  const failed = await q.getJob(f.id);
  check(failed.attemptsMade === 1 && failed.stacktrace.length === 1, 'the failed run', failed);
  await failed.retry('failed');
  const rv2 = await f.waitUntilFinished(qe, 10000);
  const done = await q.getJob(f.id);
  check(rv2 && rv2.run === 2, 'the retried run', rv2);
  check(done.attemptsMade === 2 && done.attemptsStarted === 2 && !done.failedReason,
        'attempts after the retry', done);
  await qe.close();
  await q.close();
  console.log(JSON.stringify({ progress: mine, logs: logs.count }));
}

// Two Node flows whose delayed children `lanes jobs cancel` fails before
// they run: "held-i" (ignoreDependencyOnFailure) beside "quick", under
// "p-ignore"; "held-f" (failParentOnFailure) under "p-fail".
export async function cancelSetup(queue) {
  const fp = new FlowProducer({ connection });
  const kids = `${queue}k`;
  const ign = await fp.add({ name: 'p-ignore', queueName: queue, data: {}, children: [
    { name: 'held-i', queueName: kids, data: {}, opts: { delay: 60000, ignoreDependencyOnFailure: true } },
    { name: 'quick', queueName: kids, data: {} }] });
  const fpf = await fp.add({ name: 'p-fail', queueName: queue, data: {}, children: [
    { name: 'held-f', queueName: kids, data: {}, opts: { delay: 60000, failParentOnFailure: true } }] });
  await fp.close();
  console.log(JSON.stringify({ pi: ign.job.id, hi: ign.children[0].job.id,
                               pf: fpf.job.id, hf: fpf.children[0].job.id }));
}

// After the cancels, with Node Workers on both queues: p-ignore completes
// with quick's result and held-i's "canceled" as an ignored failure;
// p-fail fails for its child, as for any final failure of theirs.
export async function cancelCheck(queue, pi, pf) {
  const q = new Queue(queue, { connection });
  const w = new Worker(queue, async job => job.name, { connection, drainDelay: 1 });
  const wk = new Worker(`${queue}k`, async job => job.name, { connection, drainDelay: 1 });
  w.on('failed', () => {});
  const t0 = Date.now();
  const fin = async id => (await q.getJob(id))?.finishedOn;
  while (!(await fin(pi) && await fin(pf)) && Date.now() - t0 < 10000) await sleep(50);
  const a = await q.getJob(pi), b = await q.getJob(pf);
  check(await a.getState() === 'completed', 'p-ignore', await a.getState());
  const ignored = Object.values(await a.getIgnoredChildrenFailures());
  check(JSON.stringify(ignored) === '["canceled"]', 'p-ignore\'s ignored failures', ignored);
  check(JSON.stringify(Object.values(await a.getChildrenValues())) === '["quick"]', 'p-ignore\'s values');
  check(await b.getState() === 'failed', 'p-fail', await b.getState());
  await w.close();
  await wk.close();
  await q.close();
  console.log(JSON.stringify({ ignored, pfail: b.failedReason }));
}
