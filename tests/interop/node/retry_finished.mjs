// node/retry_finished.mjs - the BullMQ side of lanes' interop tests of
// retrying completed jobs: `lanes jobs retry --state completed`
// (ln_jobs_retry_finished, ln_jobs_retry_all_finished) on a Node team's
// jobs, and BullMQ's job.retry('completed') / queue.retryJobs({state:
// 'completed'}) on jobs a C worker completed.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker, QueueEvents, FlowProducer } from 'bullmq';
import IORedis from 'ioredis';
import { connection, check, until } from './common.mjs';

// A Node Worker on queue until every job of ids is completed; each run
// returns {run: N} with N its own count of the job's runs (kept in runs).
async function runAll(queue, ids, runs) {
  const q = new Queue(queue, { connection });
  const w = new Worker(queue, async job => {
    runs[job.id] = (runs[job.id] ?? 0) + 1;
    return { run: runs[job.id], by: 'node' };
  }, { connection, drainDelay: 1 });
  await until(async () => {
    for (const id of ids) if (await (await q.getJob(id))?.getState() !== 'completed') return false;
    return true;
  }, 15000, `jobs of ${queue} never completed`, async () => Promise.all(
    ids.map(async id => (await q.getJob(id))?.getState())));
  await w.close();
  await q.close();
}

// A Node team's queue: job "j" and the child "k" of flow parent "p"
// (queue <queue>p, where no worker runs), both completed by a Node Worker
// (returnvalue {run: 1}); p is then waiting, holding k's result.
export async function rfSetup(queue) {
  const q = new Queue(queue, { connection });
  const j = await q.add('j', { n: 1 });
  const fp = new FlowProducer({ connection });
  const flow = await fp.add({ name: 'p', queueName: `${queue}p`, data: {},
                              children: [{ name: 'k', queueName: queue, data: {} }] });
  const k = flow.children[0].job.id, p = flow.job.id;
  await runAll(queue, [j.id, k], {});
  const qp = new Queue(`${queue}p`, { connection });
  check(await (await qp.getJob(p)).getState() === 'waiting', 'the parent did not go on');
  console.log(JSON.stringify({ j: j.id, k, p }));
  await fp.close();
  await qp.close();
  await q.close();
}

// A retried job as BullMQ's job.retry('completed', {resetAttemptsMade:
// true}) leaves it: waiting, no returnvalue, finishedOn or processedOn,
// attemptsMade 0.
async function checkRetried(q, id) {
  const job = await q.getJob(id);
  const state = await job.getState();
  check(state === 'waiting' && job.returnvalue === null && !job.finishedOn && !job.processedOn &&
        job.attemptsMade === 0, `job ${id} is not as job.retry('completed') leaves it`,
        { state, returnvalue: job.returnvalue, finishedOn: job.finishedOn,
          processedOn: job.processedOn, attemptsMade: job.attemptsMade });
}

// After `lanes jobs retry QUEUE j --state completed` and `lanes jobs retry
// QUEUE --all --state completed` (which retried k): both are as BullMQ's
// retry leaves them, the event stream has their 'waiting' events with prev
// 'completed', p's dependency on k is unprocessed again while p stays
// waiting; a Node Worker runs both again, and p then holds k's new result.
export async function rfCheck(queue, jId, kId, pId) {
  const q = new Queue(queue, { connection }), qp = new Queue(`${queue}p`, { connection });
  await checkRetried(q, jId);
  await checkRetried(q, kId);
  const client = new IORedis(connection);
  const entries = await client.xrange(`bull:${queue}:events`, '-', '+');
  await client.quit();
  for (const id of [jId, kId]) {
    const seen = entries.some(([, f]) => f[1] === 'waiting' && f.includes(id) &&
                                          f[f.indexOf('prev') + 1] === 'completed');
    check(seen, `no 'waiting' event with prev 'completed' for ${id}`);
  }
  const p = await qp.getJob(pId);
  const deps = await p.getDependenciesCount();
  check(deps.processed === 0 && deps.unprocessed === 1, 'k is not unprocessed again', deps);
  check(await p.getState() === 'waiting', 'the parent moved', await p.getState());
  await runAll(queue, [jId, kId], { [jId]: 1, [kId]: 1 });
  const j = await q.getJob(jId);
  check(j.returnvalue?.run === 2, 'j did not run again', j.returnvalue);
  const values = await (await qp.getJob(pId)).getChildrenValues();
  check(Object.values(values).length === 1 && Object.values(values)[0].run === 2,
        'the parent does not hold the new result', values);
  console.log(JSON.stringify({ ok: true }));
  await qp.close();
  await q.close();
}

// Three jobs for a C worker ("a", "b", "c"); prints their ids.
export async function rfAdd(queue) {
  const q = new Queue(queue, { connection });
  const jobs = await q.addBulk(['a', 'b', 'c'].map(name => ({ name, data: {} })));
  console.log(JSON.stringify({ a: jobs[0].id, b: jobs[1].id, c: jobs[2].id }));
  await q.close();
}

// The jobs a C worker completed: Node retries "a" by job.retry('completed')
// and the others by queue.retryJobs({state: 'completed'}); a QueueEvents
// sees a 'waiting' event with prev 'completed' for each. (The C worker,
// still running, may take them at once: rf-ran-again checks the rest.)
export async function rfNodeRetry(queue, aId, bId, cId) {
  const q = new Queue(queue, { connection });
  const qe = new QueueEvents(queue, { connection });
  await qe.waitUntilReady();
  const seen = new Set();
  qe.on('waiting', ({ jobId, prev }) => { if (prev === 'completed') seen.add(jobId); });
  for (const id of [aId, bId, cId]) {
    const job = await q.getJob(id);
    check(await job.getState() === 'completed' && job.attemptsMade === 1,
          `job ${id} is not completed once`, [await job.getState(), job.attemptsMade]);
  }
  await (await q.getJob(aId)).retry('completed');
  await q.retryJobs({ state: 'completed' });
  await until(async () => [aId, bId, cId].every(id => seen.has(id)), 5000,
              'QueueEvents missed a waiting event', async () => [...seen]);
  console.log(JSON.stringify({ ok: true }));
  await qe.close();
  await q.close();
}

// Every job of ids completed again by the C worker: its returnvalue says
// run 2 (the C handler counts its runs in a file per job), and its
// attemptsMade is 2: BullMQ's retry kept the first run's, and the C
// worker's completion added one, as a Node Worker's does.
export async function rfRanAgain(queue, ...ids) {
  const q = new Queue(queue, { connection });
  await until(async () => {
    for (const id of ids) {
      const job = await q.getJob(id);
      if (await job.getState() !== 'completed' || job.returnvalue?.run !== 2 ||
          job.attemptsMade !== 2) return false;
    }
    return true;
  }, 15000, 'the C worker did not run the retried jobs again', async () => Promise.all(
    ids.map(async id => {
      const job = await q.getJob(id);
      return [job.returnvalue, job.attemptsMade, await job.getState()];
    })));
  console.log(JSON.stringify({ ok: true }));
  await q.close();
}
