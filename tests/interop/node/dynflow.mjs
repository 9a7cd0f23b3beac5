// node/dynflow.mjs - the BullMQ side of lanes' interop tests of children
// added to an existing parent (queue.add with opts.parent) and of
// job.moveToWaitingChildren + WaitingChildrenError, BullMQ's "process in
// steps" pattern. The C twin is tests/interop/dynflow_peer.c. Imported by
// tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker, WaitingChildrenError } from 'bullmq';
import { connection, check, handler, waitIdle } from './common.mjs';

// dyn-step QUEUE: a Worker on <queue>-p until the queue is idle; a "step"
// job with no children adds two ("kid", {k: 1} and {k: 2}) to <queue>-c
// with itself as parent, moves to waiting-children and throws
// WaitingChildrenError; once it has children (moveToWaitingChildren then
// says false: none pending) it returns {children: N}, N the results it has
// (getChildrenValues).
export async function dynStep(queue) {
  const kids = new Queue(`${queue}-c`, { connection });
  let waited = 0;
  const w = new Worker(`${queue}-p`, async (job, token) => {
    if (job.name !== 'step') return handler(job);
    const values = await job.getChildrenValues();
    const n = Object.keys(values).length;
    if (n > 0) { // step 2: nothing pending any more
      check(!(await job.moveToWaitingChildren(token)), 'moved again with its children done', job.id);
      return { children: n };
    }
    for (const k of [1, 2])
      await kids.add('kid', { k }, { parent: { id: job.id, queue: job.queueQualifiedName } });
    const moved = await job.moveToWaitingChildren(token);
    check(moved, 'moveToWaitingChildren did not move the job', job.id);
    waited++;
    throw new WaitingChildrenError();
  }, { connection, drainDelay: 1 });
  await waitIdle(`${queue}-p`);
  await w.close();
  await kids.close();
  console.log(JSON.stringify({ waited }));
}

// dyn-add QUEUE NAME PARENT_QUEUE PARENT_ID [JOB_ID [REFUSED]]: queue.add
// to <QUEUE> with opts.parent (and a custom id); prints the job's id. With
// REFUSED the add must throw an error matching it instead.
export async function dynAdd(queue, name, pqueue, pid, jobId, refused) {
  const q = new Queue(queue, { connection });
  const opts = { parent: { id: pid, queue: `bull:${pqueue}` } };
  if (jobId) opts.jobId = jobId;
  let job = null, err = null;
  try {
    job = await q.add(name, { k: 9 }, opts);
  } catch (e) { err = e; }
  await q.close();
  if (refused) {
    check(err && new RegExp(refused).test(err.message), 'add not refused', err?.message);
    console.log(JSON.stringify({ refused: err.message }));
    return;
  }
  check(!err, 'add failed', err?.message);
  console.log(JSON.stringify({ id: job.id }));
}

// dyn-missing QUEUE: queue.add with a parent that does not exist is
// refused ("Missing key for parent job").
export async function dynMissing(queue) {
  const q = new Queue(queue, { connection });
  let err = null;
  try {
    await q.add('kid', {}, { parent: { id: 'nope', queue: `bull:${queue}-p` } });
  } catch (e) { err = e; }
  await q.close();
  check(err && /Missing key for parent job/.test(err.message), 'missing parent accepted', err?.message);
  console.log(JSON.stringify({ refused: err.message }));
}

// dyn-check QUEUE ID N: parent ID of <queue>-p completed with
// {children: N}, no attempt used, getChildrenValues has N results of
// children in <queue>-c, none pending.
export async function dynCheck(queue, id, n) {
  const q = new Queue(`${queue}-p`, { connection });
  const job = await q.getJob(id);
  check(job, 'no parent job', id);
  const state = await job.getState();
  check(state === 'completed', 'parent state', state);
  check(JSON.stringify(job.returnvalue) === JSON.stringify({ children: Number(n) }),
        'parent result', job.returnvalue);
  // BullMQ counts the completion itself: 1, and 2 had the wait used one
  check(job.attemptsMade === 1, 'parent attemptsMade', job.attemptsMade);
  const values = await job.getChildrenValues();
  const keys = Object.keys(values);
  check(keys.length === Number(n), 'children values', values);
  check(keys.every(k => k.startsWith(`bull:${queue}-c:`)), 'child keys', keys);
  check(Object.values(values).every(v => v.name === 'kid'), 'child results', values);
  const deps = await job.getDependenciesCount();
  check(deps.unprocessed === 0 && deps.processed === Number(n), 'dependency counts', deps);
  await q.close();
  console.log(JSON.stringify({ id, children: keys.length }));
}
