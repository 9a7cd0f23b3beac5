// audit_board.mjs QUEUE LOGFILE - what a Node dashboard (Bull Board's
// queries: getJobCounts, getJobs, getMetrics, getWorkers, QueueEvents)
// reads while C workers (`lanes worker --metrics-points`) run a FlowProducer
// tree (root in QUEUE-p, children in QUEUE, one nested), a Node job
// scheduler and a failing job in QUEUE, a Node Worker beside them:
//   - before any worker: QUEUE-p counts the root as waiting-children;
//   - at every sample: each job is in exactly one of the lists getJobs
//     returns, getJobCounts agrees with them, at most 2+2 active;
//   - getWorkers lists the C worker (and the Node one) while they run;
//   - once the children are done the root is waiting (QueueEvents:
//     "waiting" with prev "waiting-children"), then completed;
//   - getMetrics('completed'/'failed') counts what the workers ran.
import { Queue, Worker, FlowProducer, QueueEvents } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC } from './audit_lib.mjs';

const [queue, log] = process.argv.slice(2);
const P = `${queue}-p`;
const q = new Queue(queue, { connection }), qp = new Queue(P, { connection });
const pevents = [];
const qe = new QueueEvents(P, { connection });
qe.on('waiting', e => pevents.push(['waiting', e.jobId, e.prev]));
qe.on('completed', e => pevents.push(['completed', e.jobId]));
await qe.waitUntilReady();

const fp = new FlowProducer({ connection });
const tree = await fp.add({ name: 'root', queueName: P, data: {}, children: [
  { name: 'mid', queueName: queue, data: {}, children: [{ name: 'leaf', queueName: queue, data: {} }] },
  ...Array.from({ length: 6 }, (_, i) => ({ name: 'kid', queueName: queue, data: { i } }))] });
await fp.close();
const rootId = tree.job.id;
await q.add('doomed', {}, { attempts: 2, backoff: { type: 'fixed', delay: 100 } });
await q.upsertJobScheduler('tick', { every: 250 }, { name: 'tick', data: {} });

const pc0 = await qp.getJobCounts();
check(pc0['waiting-children'] === 1 && pc0.waiting === 0, 'root counts before workers', pc0);
const c0 = await q.getJobCounts();
check(c0['waiting-children'] === 1 && c0.waiting === 9, 'children counts before workers (6 kids, leaf, doomed, tick)', c0);

const types = ['active', 'waiting', 'waiting-children', 'prioritized', 'delayed', 'completed',
               'failed', 'paused'];
async function sample(qq) {
  const where = new Map();
  for (const t of types) {
    const jobs = (await qq.getJobs([t], 0, -1)).filter(Boolean);
    for (const j of jobs) {
      const prev = where.get(j.id);
      // A job moved between two reads may show in two lists: read again.
      if (prev) return { again: true, id: j.id, lists: [prev, t] };
      where.set(j.id, t);
    }
  }
  return { where };
}

const cw = cWorker(queue, { log, sleepMs: 150, args: ['--concurrency', '2', '--metrics-points', '10'] });
const nw = new Worker(queue, nodeHandler(log, 150), {
  connection, concurrency: 2, metrics: { maxDataPoints: 10 } });
nw.on('error', e => fail('Node worker error', String(e)));
let samples = 0, twice = 0, sawC = false;
const t0 = Date.now();
while (Date.now() - t0 < 3000) {
  const s = await sample(q);
  if (s.again) { twice++; continue; }
  const n = {};
  for (const t of s.where.values()) n[t] = (n[t] ?? 0) + 1;
  check((n.active ?? 0) <= 4, 'more jobs active than the workers run', n);
  // getWorkers' name is the queue's; rawname is the connection's name.
  const names = (await q.getWorkers()).map(w => w.rawname);
  if (names.some(nm => /:w:lanes-\d+$/.test(nm ?? ''))) sawC = true;
  samples++;
  await sleep(100);
}
check(twice < samples, 'getJobs listed jobs in two states at every sample', { twice, samples });
check(sawC, 'getWorkers never listed the C worker');
await until(async () => (await qp.getJob(rootId)).getState().then(s => s === 'waiting'), 5000,
            'the root to be waiting once its children completed');
check(pevents.some(e => e[0] === 'waiting' && e[1] === rootId && e[2] === 'waiting-children'),
      'no "waiting" event (prev waiting-children) for the root', pevents);
const cp = cWorker(P, { log, sleepMs: 0, args: ['--metrics-points', '10'] });
await until(async () => (await qp.getJob(rootId)).finishedOn, 5000, 'the root to complete');
await until(() => pevents.some(e => e[0] === 'completed' && e[1] === rootId), 3000, 'completed event');
await stopC(cw);
await stopC(cp);
await nw.close();

// Settled: counts equal the lists; the metrics count the outcomes.
const s = await sample(q);
check(!s.again, 'a job in two lists once settled', s);
const counts = await q.getJobCounts(...types);
for (const t of types) {
  const n = [...s.where.values()].filter(v => v === t).length;
  check(counts[t] === n, `getJobCounts().${t} differs from getJobs`, { count: counts[t], listed: n });
}
check(counts.failed === 1 && counts.active === 0 && counts['waiting-children'] === 0, 'final counts', counts);
const done = counts.completed;
const m = await q.getMetrics('completed');
const mf = await q.getMetrics('failed');
check(Number(m.meta.count) === done, 'getMetrics completed count', { meta: m.meta, done });
check(Number(mf.meta.count) === 1, 'getMetrics failed count', mf.meta);
const mp = await qp.getMetrics('completed');
check(Number(mp.meta.count) === 1, 'getMetrics completed count of the parents', mp.meta);
// Points are pushed once a minute has passed: within a run, none or a few.
check(m.data.reduce((a, b) => a + Number(b), 0) <= done, 'metrics points', m.data);
await until(async () => (await q.getWorkersCount()) === 0, 3000, 'getWorkers empty after stop');
await qe.close();
await q.close();
await qp.close();
console.log(JSON.stringify({ samples, twice, counts, metrics: m.meta }));
process.exit(0);
