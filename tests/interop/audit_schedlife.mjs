// audit_schedlife.mjs QUEUE LOGFILE - a Node job scheduler's lifecycle while
// a Node Worker and a C worker run its iterations (both at once):
//   - limit: {every: 100, limit: 5} makes exactly 5 iterations, then none;
//   - upsert: Node changes a running scheduler's every (150 -> 400 ms) and
//     its data: still one pending iteration, later ones spaced 400 ms
//     apart with the new data;
//   - remove: removeJobScheduler while a C worker holds an iteration (1 s
//     jobs): once it finishes, no iteration is pending and none is made;
//   - a failing iteration (attempts 2) is retried and the schedule goes on.
import { Queue, Worker } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC } from './audit_lib.mjs';
import { readFileSync } from 'node:fs';

const [queue, log] = process.argv.slice(2);
const q = new Queue(queue, { connection });
// Pending: an iteration not started yet (a failed one waiting for its retry
// is delayed too, beside the next iteration, as BullMQ has it).
const pending = async key => (await q.getJobs(['delayed', 'waiting', 'prioritized'], 0, -1))
  .filter(j => j && j.repeatJobKey === key && !j.attemptsMade && !j.attemptsStarted)
  .map(j => j.id);
const iterations = async key => (await q.getJobs(['active', 'completed', 'failed', 'delayed',
  'waiting', 'prioritized'], 0, -1)).filter(j => j && j.repeatJobKey === key);

await q.upsertJobScheduler('lim', { every: 100, limit: 5 }, { name: 'lim', data: {} });
await q.upsertJobScheduler('chg', { every: 150 }, { name: 'chg', data: { v: 1 } });
await q.upsertJobScheduler('flaky', { every: 300 },
  { name: 'flaky', data: {}, opts: { attempts: 2, backoff: { type: 'fixed', delay: 50 } } });
const cw = cWorker(queue, { log, sleepMs: 20, args: ['--concurrency', '2'] });
const nw = new Worker(queue, nodeHandler(log, 20), { connection, concurrency: 2 });
nw.on('error', e => fail('Node worker error', String(e)));

await sleep(1200);
const tChange = Date.now();
await q.upsertJobScheduler('chg', { every: 400 }, { name: 'chg', data: { v: 2 } });
for (let i = 0; i < 20; i++) {
  for (const k of ['lim', 'chg', 'flaky']) {
    const p = await pending(k);
    check(p.length <= 1, `scheduler ${k}: ${p.length} pending iterations`, p);
  }
  await sleep(100);
}
const lim = await iterations('lim');
check(lim.length === 5, `limit 5 made ${lim.length} iterations`, lim.map(j => j.id));
check(lim.every(j => j.finishedOn), 'limited iterations unfinished', lim.map(j => j.id));
const chg = (await iterations('chg')).filter(j => j.finishedOn).sort((a, b) => a.timestamp - b.timestamp);
const late = chg.filter(j => j.timestamp > tChange + 500);
check(late.length >= 2, 'iterations after the change', chg.map(j => [j.id, j.data]));
check(late.every(j => j.data.v === 2), 'iterations after the change keep the old data', late.map(j => j.data));
const ms = late.map(j => Number(j.id.split(':')[2]));
for (let i = 1; i < ms.length; i++)
  check(ms[i] - ms[i - 1] === 400, 'iterations after the change not 400 ms apart', ms);
const fl = (await iterations('flaky')).filter(j => j.finishedOn);
check(fl.length >= 3 && fl.every(j => j.returnvalue && j.attemptsMade === 2),
      'failing iterations not retried', fl.map(j => [j.id, j.attemptsMade, j.failedReason]));

// Remove while a C worker holds an iteration.
await nw.close();
await stopC(cw);
await q.removeJobScheduler('lim');
await q.removeJobScheduler('flaky');
await q.upsertJobScheduler('rm', { every: 200 }, { name: 'rm', data: {} });
const slow = cWorker(queue, { log, sleepMs: 1000, args: ['--concurrency', '1'] });
const heldId = await until(async () => (await q.getActive()).find(j => j.repeatJobKey === 'rm')?.id,
                           5000, 'the C worker to hold an iteration of rm');
await q.removeJobScheduler('rm');
await until(async () => (await q.getJob(heldId)).finishedOn, 4000, 'the held iteration to finish');
await sleep(500);
const left = await pending('rm');
await stopC(slow);
check(left.length === 0, 'a removed scheduler still has pending iterations', left);
check(!(await q.getJobScheduler('rm')), 'a removed scheduler is still listed');
const runs = readFileSync(log, 'utf8').trim().split('\n').map(l => l.split(' ')[2]);
const twice = runs.filter((id, i) => runs.indexOf(id) !== i && !id.startsWith('repeat:flaky:'));
check(twice.length === 0, 'iterations ran twice', twice);
await q.close();
console.log(JSON.stringify({ lim: lim.length, chg: chg.length, flaky: fl.length, ms }));
process.exit(0);
