// node/edit.mjs - the BullMQ side of the interop cases of changing a
// waiting job (tests/interop/cases/edit.sh): job.changePriority,
// job.changeDelay, job.updateData, queue.getDeduplicationJobId and
// queue.removeDeduplicationKey, done by Node and checked by lanes, or done
// by lanes and checked here. Queue Q holds five jobs a..e for the
// priorities; Q + "d" the delayed ones: f (a delay), g (data, dedup id k)
// and h (dedup id k2). Also Node's job.changePriority on a job a lanes C
// worker runs (BullMQ writes the field of an active job and moves
// nothing) and what that job's retry and completion leave, and BullMQ's
// add over a stale dedup key.
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { check, connection } from './common.mjs';

const HOUR = 3600000;

// The jobs of both queues, with custom ids.
export async function edSetup(queue) {
  const q = new Queue(queue, { connection });
  const d = new Queue(queue + 'd', { connection });
  for (const id of ['a', 'b', 'c']) await q.add('e', { id }, { jobId: id });
  await q.add('e', { id: 'd' }, { jobId: 'd', priority: 2 });
  await q.add('e', { id: 'e' }, { jobId: 'e', priority: 3 });
  await d.add('e', { id: 'f' }, { jobId: 'f', delay: 600000 });
  await d.add('e', { id: 'g' }, { jobId: 'g', delay: 600000, deduplication: { id: 'k' } });
  await d.add('e', { id: 'h' }, { jobId: 'h', delay: 600000, deduplication: { id: 'k2' } });
  await q.close();
  await d.close();
  console.log(JSON.stringify({ ok: true }));
}

// The changes lanes' case c_to_node makes, by Node.
export async function edNode(queue) {
  const q = new Queue(queue, { connection });
  const d = new Queue(queue + 'd', { connection });
  await (await q.getJob('a')).changePriority({ priority: 1 });
  await (await q.getJob('e')).changePriority({ priority: 0 });
  await (await q.getJob('e')).changePriority({ priority: 0, lifo: true });
  await (await q.getJob('d')).changePriority({ priority: 1, lifo: true });
  await (await d.getJob('f')).changeDelay(HOUR);
  await (await d.getJob('g')).updateData({ x: [1, 2] });
  await d.removeDeduplicationKey('k');
  await q.close();
  await d.close();
  console.log(JSON.stringify({ ok: true }));
}

// What those changes leave, as BullMQ reads it; then a Node worker runs Q
// in its new order. data: g's data hash field, exactly.
export async function edCheck(queue, data) {
  const q = new Queue(queue, { connection });
  const d = new Queue(queue + 'd', { connection });
  const ids = jobs => jobs.map(j => j.id).join(' ');
  check(ids(await q.getWaiting()) === 'e b c', 'waiting', ids(await q.getWaiting()));
  check(ids(await q.getPrioritized()) === 'd a', 'prioritized', ids(await q.getPrioritized()));
  const a = await q.getJob('a');
  check(a.priority === 1 && (await q.getJob('e')).priority === 0, 'priorities', a.priority);
  const client = new IORedis(connection);
  const f = await d.getJob('f');
  const dq = `bull:${queue}d:`;
  const due = Math.floor(Number(await client.zscore(dq + 'delayed', 'f')) / 4096);
  check(f.delay === HOUR, 'f delay', f.delay);
  check(Math.abs(due - (Date.now() + HOUR)) < 10000, 'f due', due);
  const g = await client.hget(dq + 'g', 'data');
  await client.quit();
  check(g === data, 'g data', g);
  check((await d.getDeduplicationJobId('k')) === null, 'k still held');
  check((await d.getDeduplicationJobId('k2')) === 'h', 'k2 not h');
  const order = [];
  const w = new Worker(queue, async job => { order.push(job.id); }, { connection, concurrency: 1 });
  for (let i = 0; i < 200 && order.length < 5; i++) await new Promise(r => setTimeout(r, 50));
  await w.close();
  check(order.join(' ') === 'e b c d a', 'run order', order.join(' '));
  await q.close();
  await d.close();
  console.log(JSON.stringify({ ok: true }));
}

// Queue Q for the promote / count cases: two waiting jobs, one of
// priority 3, and five delayed ones (two of priority 3).
export async function pcSetup(queue) {
  const q = new Queue(queue, { connection });
  await q.add('w', {}, {});
  await q.add('w', {}, {});
  await q.add('p', {}, { priority: 3 });
  for (let i = 0; i < 5; i++) await q.add('l', { i }, { delay: 600000, priority: i < 2 ? 3 : 0 });
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// BullMQ's queue.promoteJobs().
export async function pcPromote(queue) {
  const q = new Queue(queue, { connection });
  await q.promoteJobs();
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// getCountsPerPriority([0, 3, 5]) as lanes prints it, the delayed count
// apart: {"0":N,"3":N,"5":N} and {"delayed":N} on stderr-free lines.
export async function pcCounts(queue) {
  const q = new Queue(queue, { connection });
  const c = await q.getCountsPerPriority([0, 3, 5]);
  const delayed = await q.getDelayedCount();
  await q.close();
  console.log(JSON.stringify({ 0: c['0'], 3: c['3'], 5: c['5'] }));
  console.log(JSON.stringify({ delayed }));
}

// Queue Q's events: N jobs added (an "added" and a "waiting" event each)
// by Node, then the stream's length; or BullMQ's queue.trimEvents(max).
export async function trAdd(queue, n) {
  const q = new Queue(queue, { connection });
  await q.addBulk(Array.from({ length: Number(n) }, (_, i) => ({ name: 't', data: { i } })));
  await q.close();
  await trLen(queue);
}

export async function trTrim(queue, max) {
  const q = new Queue(queue, { connection });
  await q.trimEvents(Number(max));
  await q.close();
  await trLen(queue);
}

export async function trLen(queue) {
  const c = new IORedis(connection);
  const len = await c.xlen(`bull:${queue}:events`);
  await c.quit();
  console.log(JSON.stringify({ len }));
}

// Job 'x' of queue, two attempts, for the C worker.
export async function apAdd(queue) {
  const q = new Queue(queue, { connection });
  await q.add('x', { n: 1 }, { jobId: 'x', attempts: 2 });
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// Node adds job 'y' of priority 5, then changes the priority of active
// job 'x' (it stays active, the field is written), as a Node team's admin
// code would.
export async function apPrio(queue, priority) {
  const q = new Queue(queue, { connection });
  await q.add('y', { n: 2 }, { jobId: 'y', priority: 5 });
  const job = await q.getJob('x');
  check((await job.getState()) === 'active', 'x not active', await job.getState());
  await job.changePriority({ priority: Number(priority) });
  check((await job.getState()) === 'active', 'x left active', await job.getState());
  check((await q.getJob('x')).priority === Number(priority), 'x priority');
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// 'x' completed on its second attempt with its new priority kept, 'y' too.
export async function apCheck(queue, priority) {
  const q = new Queue(queue, { connection });
  const job = await q.getJob('x');
  const state = await job.getState();
  check(state === 'completed', 'x state', state);
  check(job.attemptsMade === 2, 'x attempts', job.attemptsMade);
  check(job.priority === Number(priority), 'x priority', job.priority);
  check((await (await q.getJob('y')).getState()) === 'completed', 'y not completed');
  const counts = await q.getJobCounts('active', 'wait', 'prioritized', 'completed');
  check(counts.active === 0 && counts.wait === 0 && counts.prioritized === 0, 'counts', counts);
  await q.close();
  console.log(JSON.stringify({ ok: true }));
}

// An add with dedup id k: BullMQ's own answer to whether k is still held
// (a new job: the key was free or stale), as {id, fresh}.
export async function sdAdd(queue, old) {
  const q = new Queue(queue, { connection });
  const job = await q.add('n', {}, { deduplication: { id: 'k' } });
  const held = await q.getDeduplicationJobId('k');
  await q.close();
  check(job.id !== old, 'BullMQ deduplicated to the gone holder', job.id);
  check(held === job.id, 'de:k after the add', held);
  console.log(JSON.stringify({ id: job.id, fresh: true }));
}
