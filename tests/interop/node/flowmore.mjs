// node/flowmore.mjs - the BullMQ side of lanes' interop tests of three
// flow calls: job.removeUnprocessedChildren(), moveToWaitingChildren with
// one child, a FlowProducer root with a parent. The C twin is
// tests/interop/flowmore_peer.c. Imported by tests/interop/interop.mjs.
import { Queue, Job, Worker, FlowProducer, WaitingChildrenError } from 'bullmq';
import { connection, check, waitIdle } from './common.mjs';

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

// fm-wait-child QUEUE CQ1 CID1 CQ2 CID2: a Worker on QUEUE until it is
// idle; each job calls moveToWaitingChildren(token, {child}) for CID1 of
// CQ1, then (if that said false) for CID2 of CQ2, and throws
// WaitingChildrenError once moved; prints what the calls answered.
export async function fmWaitChild(queue, cq1, cid1, cq2, cid2) {
  const got = [];
  const w = new Worker(queue, async (job, token) => {
    const one = await job.moveToWaitingChildren(token, { child: { id: cid1, queue: `bull:${cq1}` } });
    got.push(one);
    if (!one) got.push(await job.moveToWaitingChildren(token, { child: { id: cid2, queue: `bull:${cq2}` } }));
    if (got[got.length - 1]) throw new WaitingChildrenError();
    throw new Error('did not wait');
  }, { connection, drainDelay: 1 });
  await waitIdle(queue);
  await w.close();
  console.log(JSON.stringify({ got }));
}

// fm-flow-parent QUEUE PQUEUE PID: FlowProducer's root "r" (id r, data
// {k: 2}) of QUEUE with one child "x" (id x, data {k: 1}), the root given
// opts.parent job PID of PQUEUE.
export async function fmFlowParent(queue, pqueue, pid) {
  const fp = new FlowProducer({ connection });
  const tree = await fp.add({
    name: 'r', queueName: queue, data: { k: 2 },
    opts: { jobId: 'r', parent: { id: pid, queue: `bull:${pqueue}` } },
    children: [{ name: 'x', queueName: queue, data: { k: 1 }, opts: { jobId: 'x' } }],
  });
  await fp.close();
  console.log(JSON.stringify({ id: tree.job.id, parentKey: tree.job.parentKey ?? null }));
}
