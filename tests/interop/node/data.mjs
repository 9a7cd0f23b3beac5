// node/data.mjs - the BullMQ side of lanes' interop tests: what a job carries
// across: trace context and JSON that only JSON.parse's grammar bounds.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker } from 'bullmq';
import { connection, check, handler } from './common.mjs';

// Trace context across the queue, both ways: BullMQ's telemetry stores the
// propagation carrier as opts.tm (JobsOptions.telemetry.metadata).
export async function traceProduce(queue, traceparent) {
  const q = new Queue(queue, { connection });
  const metadata = JSON.stringify({ traceparent, tracestate: 'lanes=test' });
  const job = await q.add('trace', {}, { telemetry: { metadata } });
  await q.close();
  console.log(JSON.stringify({ id: job.id }));
}

export async function traceCheck(queue, traceparent) {
  const q = new Queue(queue, { connection });
  const fromNode = await q.getJob('1');
  check(fromNode?.returnvalue?.traceparent === traceparent, 'C worker saw', fromNode?.returnvalue);
  check(fromNode.returnvalue.tracestate === 'lanes=test', 'tracestate', fromNode.returnvalue);
  const fromC = await q.getJob('c-trace');
  const carrier = JSON.parse(fromC?.opts?.telemetry?.metadata ?? '{}');
  check(carrier.traceparent === traceparent, 'C job carrier', fromC?.opts);
  await q.close();
  console.log(JSON.stringify({ traceparent }));
}

// JSON that only JSON.parse's grammar bounds: a number past 64 bits and a
// lone surrogate (JSON.stringify writes 100000000000000000000, "\ud800").
const jsonData = { x: 1e20, s: '\ud800' };

export async function jsonProduce(queue) {
  const q = new Queue(queue, { connection });
  await q.add('echo', jsonData, { jobId: 'echo' });
  await q.add('big', {}, { jobId: 'big' });
  await q.close();
  console.log(JSON.stringify({ added: 2 }));
}

// mode "c": redis_peer's handler returned {name, data}; "exec": `lanes
// worker --exec` echoed the data and printed a big-number object for "big".
export async function jsonCheck(queue, mode) {
  const q = new Queue(queue, { connection });
  const echo = await q.getJob('echo');
  check(await echo?.getState() === 'completed', 'echo not completed', echo?.failedReason);
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  check(same(echo.data, jsonData), 'data changed', echo.data);
  const rv = mode === 'exec' ? echo.returnvalue : echo.returnvalue?.data;
  check(same(rv, jsonData), 'returnvalue is not the data', echo.returnvalue);
  check(rv.s === '\ud800' && rv.x === 1e20, 'returnvalue fields', rv);
  if (mode === 'exec') {
    const big = await q.getJob('big');
    check(big?.returnvalue?.ok === true, 'big: returnvalue.ok', big?.returnvalue);
    check(big.returnvalue.total === 1e20, 'big: returnvalue.total', big.returnvalue);
  }
  await q.close();
  console.log(JSON.stringify({ mode, returnvalue: rv }));
}

// A job "doomed" (2 attempts, 300 ms backoff) whose first run a Node
// Worker fails with a message cut inside an emoji: err.stack ends with a
// lone surrogate, which JSON.stringify writes as the escape "\ud83d".
export async function halfFail(queue) {
  const q = new Queue(queue, { connection });
  const job = await q.add('doomed', {}, { attempts: 2, backoff: { type: 'fixed', delay: 300 } });
  let done;
  const failed = new Promise(r => { done = r; });
  const w = new Worker(queue, async () => { throw new Error('bad input: ' + '😀'.slice(0, 1)); },
                       { connection, autorun: false });
  w.on('failed', () => done());
  w.run();
  await failed;
  await w.close();
  await q.close();
  console.log(JSON.stringify({ id: job.id }));
}

// The job failed for good on a C worker after the Node run: both runs'
// entries in its stacktrace, the Node one as Node wrote it.
export async function halfCheck(queue, id) {
  const q = new Queue(queue, { connection });
  const job = await q.getJob(id);
  check(await job.getState() === 'failed', 'state', await job.getState());
  check(job.attemptsMade === 2, 'attemptsMade', job.attemptsMade);
  const st = job.stacktrace;
  check(st.length === 2, 'stacktrace entries', st);
  check(st[0].startsWith('Error: bad input: \ud83d\n'), 'the Node run\'s entry', st[0]);
  check(st[1] === 'doomed', 'the C run\'s entry', st[1]);
  await q.close();
  console.log(JSON.stringify({ stacktrace: st.length }));
}

// Jobs whose custom ids end in half an emoji (an id cut from a title):
// BullMQ's scripts store such an opts JSON with the lone surrogate as the
// bytes ED A0 BD, which are not UTF-8. "flaky" has 3 attempts, "noop" is
// removed on completion.
export async function halfIds(queue) {
  const q = new Queue(queue, { connection });
  const half = '😀'.slice(0, 1);
  await q.add('flaky', {}, { jobId: `title-${half}`, attempts: 3 });
  await q.add('noop', {}, { jobId: `gone-${half}`, removeOnComplete: true });
  await q.close();
  console.log(JSON.stringify({ added: 2 }));
}

// After a C worker ran them, as after a Node Worker: the flaky job
// completed on its third attempt and the other was removed. (BullMQ
// cannot read such a job by id: ioredis sends the id as U+FFFD.)
export async function halfIdsCheck(queue) {
  const q = new Queue(queue, { connection });
  const counts = await q.getJobCounts('completed', 'failed');
  check(counts.completed === 1 && counts.failed === 0, 'counts', counts);
  await q.close();
  console.log(JSON.stringify(counts));
}
