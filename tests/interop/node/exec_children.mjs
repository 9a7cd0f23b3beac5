// node/exec_children.mjs - the BullMQ side of the interop case of a
// `lanes worker --exec` parent processed in steps (exit 78) whose children
// Node Workers run (tests/interop/cases/exec_children.sh). Imported by
// tests/interop/interop.mjs (the command dispatch).
import { Queue, QueueEvents, Worker } from 'bullmq';
import { appendFileSync } from 'node:fs';
import { connection, check, fail, sleep } from './common.mjs';

// xc-serve QUEUE LOG: a Worker on QUEUE until SIGTERM; each job's id goes
// to LOG, and it returns {part: data.n, by: "node"}.
export async function xcServe(queue, log) {
  const w = new Worker(queue, async job => {
    appendFileSync(log, `${job.id}\n`);
    return { part: job.data.n, by: 'node' };
  }, { connection, concurrency: 2 });
  await w.waitUntilReady();
  console.error('ready');
  await new Promise(resolve => process.once('SIGTERM', resolve));
  await w.close();
}

// xc-events QUEUE: QueueEvents of QUEUE until SIGTERM, then prints the
// "waiting" events' {jobId, prev} (BullMQ writes one with prev
// "waiting-children" when the last child's completion releases a parent).
export async function xcEvents(queue) {
  const qe = new QueueEvents(queue, { connection, autorun: false });
  const seen = [];
  qe.on('waiting', ({ jobId, prev }) => seen.push({ jobId, prev: prev ?? null }));
  qe.run();
  await qe.waitUntilReady();
  console.error('ready');
  await new Promise(resolve => process.once('SIGTERM', resolve));
  await qe.close();
  console.log(JSON.stringify(seen));
}

// xc-check QUEUE ID KIDS: until job ID of QUEUE completes (20 s; failed is
// an error), then checks its return value, the LANES_CHILDREN_FILE its
// program's second run printed: both children of KIDS, processed, with the
// results the Node Worker gave them, as BullMQ's getChildrenValues has
// them, and nothing failed or pending.
export async function xcCheck(queue, id, kids) {
  const q = new Queue(queue, { connection });
  const t0 = Date.now();
  // The state first, then the job: a Job read before a getState that says
  // "completed" may predate the completion (read during the second run,
  // without its return value). The completion writes the return value
  // and the completed set in one script, so a read after it has both.
  for (;;) {
    const state = await q.getJobState(id);
    if (state === 'completed') break;
    if (state === 'unknown') fail('no such parent', id);
    if (state === 'failed') fail('the parent failed', (await q.getJob(id))?.failedReason);
    if (Date.now() - t0 > 20000) fail('the parent did not complete', state);
    await sleep(50);
  }
  const job = await q.getJob(id);
  check(job && job.finishedOn, 'the completed parent has no finishedOn', job && job.asJSON());
  const rv = job.returnvalue;
  check(rv && typeof rv === 'object', 'the return value is not the children file', rv);
  const values = await job.getChildrenValues();
  check(JSON.stringify(rv.values) === JSON.stringify(values),
        'the children file\'s values are not getChildrenValues', { rv, values });
  const keys = Object.keys(values).sort();
  check(keys.length === 2 && keys.every(k => k.startsWith(`bull:${kids}:`)),
        'the parent does not have its two children of the kids queue', keys);
  const parts = keys.map(k => values[k]).map(v => `${v.part}:${v.by}`).sort();
  check(JSON.stringify(parts) === JSON.stringify(['1:node', '2:node']),
        'the children\'s results are not the Node Worker\'s', values);
  check(JSON.stringify(rv.failed) === '{}' && JSON.stringify(rv.unsuccessful) === '[]' &&
        JSON.stringify(rv.pending) === '[]', 'a child is not processed', rv);
  const deps = await job.getDependenciesCount();
  check(deps.processed === 2 && deps.unprocessed === 0, 'the dependencies', deps);
  check(job.attemptsMade === 1, 'the wait used an attempt', job.attemptsMade);
  await q.close();
  console.log(JSON.stringify({ id, values }));
}
