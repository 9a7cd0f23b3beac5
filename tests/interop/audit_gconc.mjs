// audit_gconc.mjs QUEUE LOGFILE - Node changes the global concurrency
// while a Node Worker and a C worker (concurrency 4 each) run 300 ms jobs:
// setGlobalConcurrency(1), then (3), then removeGlobalConcurrency():
//   - never more jobs active at once (processedOn..finishedOn, as Node reads
//     them) than the limit of the phase they started in (once the jobs of
//     the phase before finished);
//   - after the removal both workers run more than 3 at once;
//   - no job runs twice, both workers run some once the limit is gone.
import { Queue, Worker } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC, maxOverlap } from './audit_lib.mjs';
import { readFileSync } from 'node:fs';

const [queue, log] = process.argv.slice(2);
const q = new Queue(queue, { connection });
await q.setGlobalConcurrency(1);
await q.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'job', data: { i } })));
const cw = cWorker(queue, { log, sleepMs: 300, args: ['--concurrency', '4'] });
const nw = new Worker(queue, nodeHandler(log, 300), { connection, concurrency: 4 });
nw.on('error', e => fail('Node worker error', String(e)));

const phases = [];
async function phase(limit, ms, set) {
  // Settle: the jobs started under the old limit finish first.
  await set();
  await sleep(400);
  const from = Date.now();
  await sleep(ms);
  phases.push({ limit, from, to: Date.now() });
}
await phase(1, 1500, async () => {});
await phase(3, 1500, () => q.setGlobalConcurrency(3));
await phase(Infinity, 1200, () => q.removeGlobalConcurrency());
await until(async () => (await q.getJobCounts('waiting', 'active')).active === 0, 8000, 'the run to end');
await stopC(cw);
await nw.close();

const done = (await q.getJobs(['completed'], 0, -1)).filter(Boolean);
const report = [];
for (const p of phases) {
  const js = done.filter(j => j.processedOn >= p.from && j.processedOn < p.to);
  const over = maxOverlap(js.map(j => [j.processedOn, j.finishedOn]));
  const byC = js.filter(j => j.returnvalue.by === 'c').length;
  report.push({ limit: p.limit, jobs: js.length, maxActive: over, byC });
  check(over <= p.limit, `global concurrency ${p.limit}: ${over} jobs active at once`, report);
  // Under a limit the worker that finishes a job takes the next in the same
  // call (BullMQ's fetch-next), so one worker may hold every slot: only the
  // unlimited phase must see both.
  check(js.length > 0 && (p.limit !== Infinity || (byC > 0 && byC < js.length)),
        'a phase without jobs, or the unlimited one without both workers', report);
}
check(report[2].maxActive > 3, 'removeGlobalConcurrency did not lift the limit', report);
const runs = readFileSync(log, 'utf8').trim().split('\n').map(l => l.split(' ')[2]);
check(new Set(runs).size === runs.length, 'jobs ran twice');
await q.close();
console.log(JSON.stringify(report));
process.exit(0);
