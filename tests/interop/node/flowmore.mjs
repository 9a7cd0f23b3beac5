// node/flowmore.mjs - the BullMQ side of lanes' interop tests of three
// flow calls: job.removeUnprocessedChildren(), moveToWaitingChildren with
// one child, a FlowProducer root with a parent. The C twin is
// tests/flowmore_peer.c. Imported by tests/interop/interop.mjs.
import { Queue, Job } from 'bullmq';
import { connection, check } from './common.mjs';

// fm-unprocessed QUEUE ID: job.removeUnprocessedChildren() of job ID.
export async function fmUnprocessed(queue, id) {
  const q = new Queue(queue, { connection });
  const job = await Job.fromId(q, id);
  check(job, 'no such job', id);
  await job.removeUnprocessedChildren();
  await q.close();
  console.log(JSON.stringify({ ok: 1 }));
}

// fm-children QUEUE ID: job ID's getChildrenValues, its parentKey and
// its pending dependencies count.
export async function fmChildren(queue, id) {
  const q = new Queue(queue, { connection });
  const job = await Job.fromId(q, id);
  check(job, 'no such job', id);
  const values = await job.getChildrenValues();
  const deps = await job.getDependenciesCount();
  await q.close();
  console.log(JSON.stringify({ values, parentKey: job.parentKey ?? null, unprocessed: deps.unprocessed }));
}
