// audit_sched.mjs QUEUE LOGFILE - Node job schedulers (every 150 ms and a
// cron pattern with seconds) on a queue where a Node Worker and a C worker
// (`lanes worker`) run at once, both with a limiter of 4 jobs a second, and
// a global concurrency of 1 set from Node:
//   - each scheduler has at most one pending iteration (delayed, waiting or
//     prioritized) at every sample, and exactly one once the workers stop;
//   - no iteration runs twice, both kinds of worker ran some;
//   - never two jobs active at once (processedOn..finishedOn, as Node reads
//     them), never 5 started in one of the limiter's
//     fixed windows of a second (8 in any second).
import { Queue, Worker } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC, maxOverlap,
         maxInWindow, maxInFixedWindow } from './audit_lib.mjs';
import { readFileSync } from 'node:fs';

const [queue, log] = process.argv.slice(2);
const q = new Queue(queue, { connection });
await q.setGlobalConcurrency(1);
await q.upsertJobScheduler('tick', { every: 150 }, { name: 'tick', data: { t: 1 } });
await q.upsertJobScheduler('cron', { pattern: '* * * * * *' }, { name: 'cron', data: { c: 1 } });

const pendingStates = ['delayed', 'waiting', 'prioritized'];
async function pending() {
  const jobs = await q.getJobs(pendingStates, 0, -1);
  const by = { tick: [], cron: [] };
  for (const j of jobs) if (j && by[j.repeatJobKey]) by[j.repeatJobKey].push(j.id);
  return by;
}

const w = new Worker(queue, nodeHandler(log, 40), {
  connection, concurrency: 2, limiter: { max: 4, duration: 1000 },
});
w.on('error', e => fail('Node worker error', String(e)));
const c = cWorker(queue, { log, sleepMs: 40, args: ['--concurrency', '2', '--rate-limit', '4/1000'] });

const t0 = Date.now();
let samples = 0;
while (Date.now() - t0 < 5000) {
  const p = await pending();
  for (const k of ['tick', 'cron'])
    check(p[k].length <= 1, `scheduler ${k} has ${p[k].length} pending iterations`, p[k]);
  samples++;
  await sleep(100);
}
await stopC(c);
await w.close();
check(c.exitCode === 0, 'C worker exit', { code: c.exitCode, err: c.err });

// Settled: one pending iteration each (a take in flight may add it late).
const settled = await until(async () => {
  const p = await pending();
  return p.tick.length === 1 && p.cron.length === 1 ? p : null;
}, 3000, 'one pending iteration per scheduler after the workers stopped');

const runs = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
const ids = runs.map(l => l.split(' ')[2]);
const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
check(dup.length === 0, 'iterations ran twice', dup);
const byC = runs.filter(l => l.startsWith('c ')).length, byNode = runs.length - byC;
check(byC > 0 && byNode > 0, 'one kind of worker ran nothing', { byC, byNode });

const done = (await q.getJobs(['completed', 'failed'], 0, -1)).filter(Boolean);
check(done.length >= 10, 'too few iterations ran', done.length);
check(done.every(j => j.finishedOn && j.returnvalue), 'a job without outcome',
      done.filter(j => !j.returnvalue).map(j => [j.id, j.failedReason]));
const over = maxOverlap(done.map(j => [j.processedOn, j.finishedOn]));
check(over <= 1, `global concurrency 1 exceeded: ${over} jobs active at once`);
const starts = done.map(j => j.processedOn);
const inWin = maxInFixedWindow(starts, 1000, 4);
check(inWin <= 4, `limiter 4/1000 exceeded: ${inWin} jobs started in one window`,
      starts.sort((a, b) => a - b).map(t => t - starts[0]));
const sliding = maxInWindow(starts, 1000);
check(sliding <= 8, `limiter 4/1000 exceeded: ${sliding} jobs started within 1000 ms`);
// Iteration ids are the scheduler's: repeat:<id>:<millis>, each millis once.
for (const j of done) check(/^repeat:(tick|cron):\d+$/.test(j.id), 'iteration id', j.id);
const cronMs = done.filter(j => j.repeatJobKey === 'cron').map(j => Number(j.id.split(':')[2]));
check(cronMs.every(ms => ms % 1000 === 0), 'cron iterations off whole seconds', cronMs);
await q.close();
console.log(JSON.stringify({ samples, ran: runs.length, byC, byNode, maxActive: over,
                             maxPerWindow: inWin, maxSliding: sliding, pending: settled }));
process.exit(0);
