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

// prom-export QUEUE PREFIX: BullMQ's queue.exportPrometheusMetrics() of
// QUEUE under key prefix PREFIX, as it prints it (the dashboard's /metrics
// test compares lanes' bullmq_* series with it).
export async function promExport(queue, prefix) {
  const q = new Queue(queue, { connection, prefix });
  console.log(await q.exportPrometheusMetrics());
  await q.close();
}
