// node/detach.mjs - the BullMQ side of the interop cases of
// job.removeChildDependency() (tests/interop/cases/detach.sh): a flow to
// detach from, and Node's own call for lanes to read.
import { Queue, Job, FlowProducer } from 'bullmq';
import { connection, check } from './common.mjs';

// dt-setup QUEUE: FlowProducer's root "r" (name "parent") with the
// children "x" and "y" (name "k") in QUEUE.
export async function dtSetup(queue) {
  const fp = new FlowProducer({ connection });
  await fp.add({
    name: 'parent', queueName: queue, data: {}, opts: { jobId: 'r' },
    children: [
      { name: 'k', queueName: queue, data: { c: 'x' }, opts: { jobId: 'x' } },
      { name: 'k', queueName: queue, data: { c: 'y' }, opts: { jobId: 'y' } },
    ],
  });
  await fp.close();
  console.log(JSON.stringify({ ok: 1 }));
}

// dt-node QUEUE ID: job ID's removeChildDependency(); prints its answer.
export async function dtNode(queue, id) {
  const q = new Queue(queue, { connection });
  const job = await Job.fromId(q, id);
  check(job, 'no such job', id);
  const removed = await job.removeChildDependency();
  await q.close();
  console.log(JSON.stringify({ removed }));
}
