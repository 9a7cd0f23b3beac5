// node/review3.mjs - the BullMQ side of the review's interop cases
// (tests/interop/cases/review3.sh): Node's job.changePriority on a job a
// lanes C worker runs (BullMQ writes the field of an active job and moves
// nothing), and what that job's retry and completion leave.
import { Queue } from 'bullmq';
import { check, connection } from './common.mjs';

// Job 'x' of queue, two attempts, for the C worker.
export async function rvAdd(queue) {
  const q = new Queue(queue, { connection });
  await q.add('x', { n: 1 }, { jobId: 'x', attempts: 2 });
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// Node adds job 'y' of priority 5, then changes the priority of active
// job 'x' (it stays active, the field is written), as a Node team's admin
// code would.
export async function rvPrio(queue, priority) {
  const q = new Queue(queue, { connection });
  await q.add('y', { n: 2 }, { jobId: 'y', priority: 5 });
  const job = await q.getJob('x');
  check((await job.getState()) === 'active', 'x not active', await job.getState());
  await job.changePriority({ priority: Number(priority) });
  check((await job.getState()) === 'active', 'x left active', await job.getState());
  check((await q.getJob('x')).priority === Number(priority), 'x priority');
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// 'x' completed on its second attempt with its new priority kept, 'y' too.
export async function rvCheck(queue, priority) {
  const q = new Queue(queue, { connection });
  const job = await q.getJob('x');
  const state = await job.getState();
  check(state === 'completed', 'x state', state);
  check(job.attemptsMade === 2, 'x attempts', job.attemptsMade);
  check(job.priority === Number(priority), 'x priority', job.priority);
  check((await (await q.getJob('y')).getState()) === 'completed', 'y not completed');
  const counts = await q.getJobCounts('active', 'wait', 'prioritized', 'completed');
  check(counts.active === 0 && counts.wait === 0 && counts.prioritized === 0, 'counts', counts);
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// An add with dedup id k: BullMQ's own answer to whether k is still held
// (a new job: the key was free or stale), as {id, fresh}.
export async function rvDedupAdd(queue, old) {
  const q = new Queue(queue, { connection });
  const job = await q.add('n', {}, { deduplication: { id: 'k' } });
  const held = await q.getDeduplicationJobId('k');
  await q.close();
  check(job.id !== old, 'BullMQ deduplicated to the gone holder', job.id);
  check(held === job.id, 'de:k after the add', held);
  console.log(JSON.stringify({ id: job.id, fresh: true }));
}
