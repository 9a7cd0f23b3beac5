// node/metrics.mjs - the BullMQ side of lanes' interop tests: per-minute
// metrics as Node reads them. Imported by tests/interop/interop.mjs (the
// command dispatch).
import { Queue } from 'bullmq';
import { connection } from './common.mjs';

// queue.getMetrics for both types, as Bull Board's chart reads them:
// {completed: {meta, data, count}, failed: {...}}.
export async function metrics(queue) {
  const q = new Queue(queue, { connection });
  const out = { completed: await q.getMetrics('completed'), failed: await q.getMetrics('failed') };
  await q.close();
  console.log(JSON.stringify(out));
}
