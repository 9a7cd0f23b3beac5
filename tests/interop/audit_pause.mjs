// audit_pause.mjs QUEUE LOGFILE - Node's queue.pause()/resume() and
// removeOnComplete/removeOnFail counts on a queue a Node job scheduler
// feeds, run by a Node Worker and a C worker at once:
//   - once pause() returned (and the jobs active then finished), no job
//     starts on either worker; jobs added meanwhile and the scheduler's
//     iteration wait (getJobCounts), one iteration pending;
//   - after resume() both workers run again and the schedule goes on;
//   - removeOnComplete {count: 3} / removeOnFail {count: 2} keep only the
//     newest 3 completed / 2 failed jobs at the time, whichever worker ran them.
import { Queue, Worker } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC } from './audit_lib.mjs';

const [queue, log] = process.argv.slice(2);
const q = new Queue(queue, { connection });
await q.upsertJobScheduler('tick', { every: 150 }, { name: 'tick', data: {} });
const cw = cWorker(queue, { log, sleepMs: 50, args: ['--concurrency', '2'] });
const nw = new Worker(queue, nodeHandler(log, 50), { connection, concurrency: 2 });
nw.on('error', e => fail('Node worker error', String(e)));
await sleep(1000);

await q.pause();
const tPause = Date.now();
await until(async () => (await q.getActiveCount()) === 0, 3000, 'the active jobs to finish');
const tIdle = Date.now();
for (let i = 0; i < 6; i++)
  await q.add(i % 2 ? 'keep' : 'doomed-keep', { i },
              i % 2 ? { removeOnComplete: { count: 3 } } : { removeOnFail: { count: 2 } });
await sleep(1200);
const counts = await q.getJobCounts('paused', 'waiting', 'active', 'delayed');
// This BullMQ keeps a paused queue's jobs in wait (meta.paused set; the
// legacy paused list only drained by resume).
check(counts.active === 0, 'jobs active while paused', counts);
check(counts.waiting + counts.paused >= 7, 'jobs added while paused not listed', counts);
const startedLate = (await q.getJobs(['completed', 'failed'], 0, -1))
  .filter(j => j && j.processedOn > tIdle);
check(startedLate.length === 0, 'jobs started while the queue was paused',
      startedLate.map(j => [j.id, j.processedOn - tPause, j.returnvalue]));
const pendingTicks = (await q.getJobs(['paused', 'delayed', 'waiting'], 0, -1))
  .filter(j => j && j.repeatJobKey === 'tick');
check(pendingTicks.length === 1, 'pending iterations while paused', pendingTicks.map(j => j.id));

await q.resume();
const tResume = Date.now();
await until(async () => {
  const c = await q.getJobCounts('paused', 'waiting', 'active');
  return c.paused === 0 && c.waiting === 0 && c.active === 0;
}, 5000, 'the jobs added while paused to run');
await sleep(600);
await stopC(cw);
await nw.close();
const after = (await q.getJobs(['completed'], 0, -1))
  .filter(j => j && j.repeatJobKey === 'tick' && j.processedOn > tResume);
check(after.length >= 2, 'the schedule did not go on after resume', after.length);
const done = await q.getJobs(['completed'], 0, -1);
// {count: 3} trims the whole completed set (iterations too) to its newest 3
// when such a job completes: the last of them to finish kept at most 2
// older completed jobs, of any name.
const keep = done.filter(j => j && j.name === 'keep');
check(keep.length >= 1 && keep.length <= 3, 'removeOnComplete {count: 3} kept', keep.map(j => j.data.i));
const last = keep.reduce((a, b) => (b.finishedOn > a.finishedOn ? b : a));
const older = done.filter(j => j && j !== last && j.finishedOn < last.finishedOn);
check(older.length <= 2, 'removeOnComplete {count: 3} kept more completed jobs',
      older.map(j => j.id));
const failed = (await q.getJobs(['failed'], 0, -1)).filter(j => j && j.name === 'doomed-keep');
check(failed.length === 2, 'removeOnFail {count: 2} kept', failed.map(j => j.data.i));
await q.close();
console.log(JSON.stringify({ paused: counts, after: after.length, keep: keep.map(j => j.data.i),
                             failed: failed.map(j => j.data.i) }));
process.exit(0);
