// node/admin.mjs - the BullMQ side of lanes' interop tests of lanes'
// administration of a Node team's queue: what `lanes jobs drain` and
// `lanes jobs clean` leave of job schedulers, deduplication and flows.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker, FlowProducer } from 'bullmq';
import { connection, check, sleep } from './common.mjs';

// A paused queue as a Node team has it before a drain: the pending
// iteration of scheduler "tick", a delayed job holding deduplication id
// "dttl" (60 s TTL), a waiting one holding "dsimple", a parent waiting for
// a child in queue <queue>k, and one waiting for a child in its own queue.
export async function drainSetup(queue) {
  const q = new Queue(queue, { connection });
  await q.pause();
  await q.upsertJobScheduler('tick', { every: 200 }, { name: 'tick', data: {} });
  await q.add('later', {}, { delay: 60000, deduplication: { id: 'dttl', ttl: 60000 } });
  await q.add('plain', {}, { deduplication: { id: 'dsimple' } });
  const fp = new FlowProducer({ connection });
  const other = await fp.add({ name: 'parent-other', queueName: queue, data: {},
                               children: [{ name: 'kid', queueName: `${queue}k`, data: {} }] });
  const same = await fp.add({ name: 'parent-same', queueName: queue, data: {},
                              children: [{ name: 'kid', queueName: queue, data: {} }] });
  await fp.close();
  await q.close();
  console.log(JSON.stringify({ other: other.job.id, same: same.job.id }));
}

// After `lanes jobs drain` of <queue> and then <queue>k: what BullMQ's
// queue.drain(true) leaves. The scheduler's iteration waits, and once the
// queue is resumed a Node Worker runs it and the schedule goes on; the
// deduplication ids are free (Node's adds add jobs); the parent whose
// child was in the other queue waits and completes; the one whose child
// was in its own queue is removed with it.
export async function drainCheck(queue, otherId, sameId) {
  const q = new Queue(queue, { connection });
  const waiting = await q.getJobs(['wait', 'paused', 'prioritized', 'delayed'], 0, -1);
  const names = waiting.map(j => j.name).sort();
  check(JSON.stringify(names) === '["parent-other","tick"]', 'jobs left by the drain', names);
  check((await q.getJob(sameId)) === undefined, 'the parent of a drained child of its queue is left',
        await (await q.getJob(sameId))?.getState());
  await q.resume();
  const w = new Worker(queue, async job => job.name, { connection, drainDelay: 1 });
  const a = await q.add('later2', {}, { delay: 60000, deduplication: { id: 'dttl', ttl: 60000 } });
  const b = await q.add('plain2', {}, { deduplication: { id: 'dsimple' } });
  check((await q.getJob(a.id))?.name === 'later2', 'a TTL deduplication id of a drained job still held', a.id);
  check((await q.getJob(b.id))?.name === 'plain2', 'a deduplication id of a drained job still held', b.id);
  const t0 = Date.now();
  let ticks = 0;
  while (Date.now() - t0 < 5000) {
    ticks = (await q.getJobs(['completed'], 0, -1)).filter(j => j.name === 'tick').length;
    if (ticks >= 3 && (await q.getJob(otherId))?.finishedOn) break;
    await sleep(100);
  }
  check(ticks >= 3, 'the schedule did not go on after the drain', ticks);
  const parent = await q.getJob(otherId);
  check(await parent?.getState() === 'completed', 'the parent of the drained child',
        await parent?.getState());
  await w.close();
  await q.close();
  console.log(JSON.stringify({ ticks, parent: 'completed' }));
}
