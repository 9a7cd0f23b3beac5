// audit_dedup.mjs QUEUE LOGFILE - Node deduplication on a queue that a Node
// job scheduler feeds too, a Node Worker and a C worker running both:
// Node adds, every 40 ms for 3 s, jobs with deduplication ids of four kinds
// (completing, removeOnComplete, failing after 2 attempts, failing once
// then retried) and one with a TTL of 1500 ms:
//   - simple mode: a new job of an id only once the one before finished
//     (completed, or failed for good: not between attempts), and then one;
//     every add meanwhile returns the holder's id and emits 'deduplicated';
//   - TTL mode: a new job only once the TTL is over, finished or not;
//   - no deduplication key is left once every job finished;
//   - the schedule keeps one pending iteration, none runs twice.
import { Queue, Worker, QueueEvents } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC } from './audit_lib.mjs';
import { readFileSync } from 'node:fs';

const [queue, log] = process.argv.slice(2);
const q = new Queue(queue, { connection });
let dedupEvents = 0;
const qe = new QueueEvents(queue, { connection });
qe.on('deduplicated', () => dedupEvents++);
await qe.waitUntilReady();
await q.upsertJobScheduler('tick', { every: 200 }, { name: 'tick', data: {} });

const kinds = {
  dd: {},
  'gone-dd': { removeOnComplete: true },
  'doomed-dd': { attempts: 2, backoff: { type: 'fixed', delay: 150 } },
  'flaky-dd': { attempts: 2, backoff: { type: 'fixed', delay: 150 } },
};
const cw = cWorker(queue, { log, sleepMs: 80, args: ['--concurrency', '2'] });
const nw = new Worker(queue, nodeHandler(log, 80), { connection, concurrency: 2 });
nw.on('error', e => fail('Node worker error', String(e)));

const made = {}, returned = { dup: 0 };
const t0 = Date.now();
for (let i = 0; Date.now() - t0 < 3000; i++) {
  const name = Object.keys(kinds)[i % 4];
  const j = await q.add(name, { i }, { ...kinds[name], deduplication: { id: `d-${name}` } });
  made[name] ??= new Set();
  if (made[name].has(j.id)) returned.dup++;
  made[name].add(j.id);
  if (i % 4 === 0) {
    const t = await q.add('ttl', { i }, { deduplication: { id: 'd-ttl', ttl: 1500 } });
    made.ttl ??= new Set();
    if (made.ttl.has(t.id)) returned.dup++;
    made.ttl.add(t.id);
  }
  await sleep(40);
}
const all = Object.values(made).flatMap(s => [...s]);
await until(async () => {
  for (const id of all) {
    const j = await q.getJob(id);
    if (j && !j.finishedOn) return false;
  }
  return true;
}, 8000, 'every deduplicated job to finish');
await stopC(cw);
await nw.close();

for (const [name, ids] of Object.entries(made)) {
  check(ids.size >= 2, `only ${ids.size} job(s) of ${name} in 3 s: its deduplication key outlived it`);
  if (name === 'gone-dd') {
    for (const id of ids) check(!(await q.getJob(id)), 'removeOnComplete job kept', id);
    continue;
  }
  const jobs = await Promise.all([...ids].map(id => q.getJob(id)));
  jobs.sort((a, b) => a.timestamp - b.timestamp);
  for (let k = 1; k < jobs.length; k++) {
    const prev = jobs[k - 1], next = jobs[k];
    if (name === 'ttl')
      check(next.timestamp - prev.timestamp >= 1500 - 5, 'TTL deduplication let a job in early',
            { prev: prev.timestamp, next: next.timestamp });
    else
      check(next.timestamp >= prev.finishedOn - 5, `a second ${name} job while the first was unfinished`,
            { prev: prev.id, prevFinished: prev.finishedOn, next: next.id, added: next.timestamp });
  }
  const want = { dd: 'completed', 'flaky-dd': 'completed', 'doomed-dd': 'failed', ttl: 'completed' }[name];
  for (const j of jobs) check((await j.getState()) === want, `${name} state`, [j.id, await j.getState()]);
  if (name === 'flaky-dd' || name === 'doomed-dd')
    check(jobs.every(j => j.attemptsMade === 2), `${name} attempts`, jobs.map(j => j.attemptsMade));
}
const left = [];
for (const name of Object.keys(kinds)) {
  const holder = await q.getDeduplicationJobId(`d-${name}`);
  if (holder) left.push([`bull:${queue}:de:d-${name}`, holder]);
}
check(left.length === 0, 'deduplication keys left after their jobs finished', left);
await until(() => dedupEvents >= returned.dup, 3000, `${returned.dup} deduplicated events (got ${dedupEvents})`);

const runs = readFileSync(log, 'utf8').trim().split('\n');
const ticks = runs.map(l => l.split(' ')[2]).filter(id => id.startsWith('repeat:'));
const twice = ticks.filter((id, i) => ticks.indexOf(id) !== i);
check(twice.length === 0, 'iterations ran twice', twice);
const pending = (await q.getJobs(['delayed', 'waiting', 'prioritized'], 0, -1))
  .filter(j => j && j.repeatJobKey === 'tick');
check(pending.length === 1, 'pending iterations at the end', pending.map(j => j.id));
await qe.close();
await q.close();
const sizes = Object.fromEntries(Object.entries(made).map(([k, v]) => [k, v.size]));
console.log(JSON.stringify({ jobs: sizes, deduplicated: returned.dup, events: dedupEvents,
                             ticks: ticks.length, byC: runs.filter(l => l.startsWith('c ')).length }));
process.exit(0);
