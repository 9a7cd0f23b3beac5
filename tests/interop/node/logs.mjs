// node/logs.mjs - the BullMQ side of the interop cases of a job's log
// lines (tests/interop/cases/logs.sh): what queue.getJobLogs reads, and
// Node's queue.addJobLog(jobId, line, keepLogs) and job.clearLogs(keep)
// for lanes to read.
import { Queue } from 'bullmq';
import { check, connection } from './common.mjs';

// Job id's lines as BullMQ reads them: {"logs": [...], "count": N}.
export async function logsGet(queue, id) {
  const q = new Queue(queue, { connection });
  const { logs, count } = await q.getJobLogs(id, 0, -1, true);
  await q.close();
  console.log(JSON.stringify({ logs, count }));
}

// Node writes job id's lines: op "add" LINE [KEEP] (prints the count
// addJobLog returns), or "clear" [KEEP] (job.clearLogs).
export async function logsNode(queue, id, op, a, b) {
  const q = new Queue(queue, { connection });
  if (op === 'add') {
    console.log(JSON.stringify({ count: await q.addJobLog(id, a, b ? Number(b) : undefined) }));
  } else {
    const job = await q.getJob(id);
    check(job, 'no such job', id);
    await job.clearLogs(a ? Number(a) : undefined);
  }
  await q.close();
}
