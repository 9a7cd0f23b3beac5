// audit_longid.mjs QUEUE LOGFILE - long ids through the features that build
// keys from them, run by C workers only (QUEUE, QUEUE-p) with Node reading:
//   - a job scheduler whose id is 300 bytes: its iterations
//     (repeat:<id>:<ms>) run and advance, one pending at a time;
//   - a FlowProducer tree with a 400-byte root id and 500-byte child ids:
//     the root completes with the child's value under the child's key; a
//     failParentOnFailure child of 500 bytes fails its root, whose
//     failedReason names the whole key;
//   - a 300-byte deduplication id: deduplicated while its job runs,
//     released once a C worker completed it.
import { Queue, FlowProducer } from 'bullmq';
import { connection, check, sleep, until, cWorker, stopC } from './audit_lib.mjs';

const [queue, log] = process.argv.slice(2);
const P = `${queue}-p`;
const q = new Queue(queue, { connection }), qp = new Queue(P, { connection });
const sid = 's'.repeat(300), rid = 'r'.repeat(400), bid = 'b'.repeat(400);
const kid = 'c'.repeat(500), did = 'd'.repeat(500), dedup = 'e'.repeat(300);

await q.upsertJobScheduler(sid, { every: 150 }, { name: 'tick', data: {} });
const fp = new FlowProducer({ connection });
await fp.add({ name: 'root', queueName: P, data: {}, opts: { jobId: rid }, children: [
  { name: 'kid', queueName: queue, data: {}, opts: { jobId: kid } }] });
await fp.add({ name: 'root', queueName: P, data: {}, opts: { jobId: bid }, children: [
  { name: 'doomed', queueName: queue, data: {}, opts: { jobId: did, failParentOnFailure: true } }] });
await fp.close();
const d1 = await q.add('slow-dd', {}, { deduplication: { id: dedup } });

const cw = cWorker(queue, { log, sleepMs: 100, args: ['--concurrency', '2'] });
const cp = cWorker(P, { log, args: ['--concurrency', '2'] });
await until(async () => (await q.getJob(d1.id)).processedOn, 5000, 'the deduplicated job to start');
const d2 = await q.add('slow-dd', {}, { deduplication: { id: dedup } });
check(d2.id === d1.id, 'a 300-byte deduplication id did not deduplicate', [d1.id, d2.id]);
for (let i = 0; i < 15; i++) {
  const p = (await q.getJobs(['delayed', 'waiting', 'prioritized'], 0, -1))
    .filter(j => j && j.repeatJobKey === sid);
  check(p.length <= 1, 'pending iterations of the long scheduler', p.length);
  await sleep(100);
}
const roots = await until(async () => {
  const r = await qp.getJob(rid), b = await qp.getJob(bid);
  return r?.finishedOn && b?.finishedOn ? [r, b] : null;
}, 8000, 'both long-id roots to finish');
await until(async () => (await q.getJob(d1.id)).finishedOn, 3000, 'the deduplicated job to finish');
const d3 = await q.add('slow-dd', {}, { deduplication: { id: dedup } });
check(d3.id !== d1.id, 'the 300-byte deduplication id outlived its job', d3.id);
await until(async () => (await q.getJob(d3.id)).finishedOn, 3000, 'the second deduplicated job');
await stopC(cw);
await stopC(cp);

const [r, b] = roots;
check((await r.getState()) === 'completed', 'long root state', await r.getState());
const vals = await r.getChildrenValues();
check(JSON.stringify(Object.keys(vals)) === JSON.stringify([`bull:${queue}:${kid}`]) &&
      vals[`bull:${queue}:${kid}`].name === 'kid', 'long child value', Object.keys(vals).map(k => k.length));
check((await b.getState()) === 'failed' && b.failedReason === `child bull:${queue}:${did} failed`,
      'long fail-parent root', { state: await b.getState(), len: (b.failedReason ?? '').length });
const its = (await q.getJobs(['completed'], 0, -1)).filter(j => j && j.repeatJobKey === sid);
check(its.length >= 5 && its.every(j => j.id.startsWith(`repeat:${sid}:`)), 'long scheduler iterations',
      its.length);
const sched = await q.getJobScheduler(sid);
check(sched && sched.key === sid, 'getJobScheduler of the long id', sched && sched.key.length);
await q.close();
await qp.close();
console.log(JSON.stringify({ iterations: its.length, root: 'completed', bad: 'failed' }));
process.exit(0);
