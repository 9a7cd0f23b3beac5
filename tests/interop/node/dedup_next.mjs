// node/dedup_next.mjs - the BullMQ side of lanes' deduplication interop
// tests that need more than an add: BullMQ's own stalled check. Imported
// by tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker } from 'bullmq';
import { connection, check, sleep } from './common.mjs';

// Run stock BullMQ's stalled check (Worker.moveStalledJobsToWait, with
// maxStalledCount 0) on queue until job id, whose lock has lapsed, is
// moved: it goes back to wait carrying its deferred failure (defa). The
// worker takes no job (no processor, not running).
export async function dnStalled(queue, id) {
  const q = new Queue(queue, { connection });
  const w = new Worker(queue, null, {
    connection, autorun: false, maxStalledCount: 0, stalledInterval: 100,
  });
  let state = await q.getJobState(id);
  for (let i = 0; i < 100 && state !== 'waiting'; i++) {
    await w.moveStalledJobsToWait();
    await sleep(150);
    state = await q.getJobState(id);
  }
  check(state === 'waiting', 'state after the stalled check', state);
  await w.close();
  await q.close();
}
