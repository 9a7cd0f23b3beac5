// node/cancel.mjs - the BullMQ side of lanes' interop tests: a cancel from
// lanes seen from Node. Imported by tests/interop/interop.mjs (the command
// dispatch).
import { Queue, Worker, QueueEvents } from 'bullmq';
import { appendFileSync } from 'node:fs';
import { connection, check, sleep, handler } from './common.mjs';

// A cancel from lanes (`lanes jobs cancel` in the shell) seen from Node:
// add a job named name with 3 attempts (QueueEvents ready first), append
// its id to readyFile (with holder "node": a Node Worker runs it, and its
// processor appends the id once it runs and returns only after the
// cancel), and wait for its "failed" event: failedReason "canceled", one
// attempt made, no retry. A Node holder's late outcome is refused by
// BullMQ (an 'error' on the worker), the job stays failed, and the worker
// then completes another job.
export async function cancelSeen(queue, name, readyFile, holder) {
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
