// audit_stall.mjs QUEUE LOGFILE - BullMQ's stalled checker (a Node Worker
// that only checks, every 300 ms) on queues where C workers (`lanes worker
// --lease 1000`, 1.2 s a job) run a Node job scheduler's iterations and
// FlowProducer children (QUEUE) and the flow's parents (QUEUE-p):
//   1. while the C workers renew their locks, Node marks nothing stalled,
//      and the flow and the schedule finish/advance on C alone;
//   2. the C worker of QUEUE killed with kill -9 holding a flow's children
//      and an iteration: Node's checker moves exactly those jobs back
//      (a 'stalled' event each), a Node Worker runs them, the flow's parent
//      completes (on the C worker of QUEUE-p) with every child's value and
//      the schedule goes on with one pending iteration at a time.
import { Queue, Worker, FlowProducer, QueueEvents } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC } from './audit_lib.mjs';
import { readFileSync } from 'node:fs';

const [queue, log] = process.argv.slice(2);
const P = `${queue}-p`;
const q = new Queue(queue, { connection }), qp = new Queue(P, { connection });
const stalled = [];
const qe = new QueueEvents(queue, { connection });
qe.on('stalled', ({ jobId }) => stalled.push(jobId));
await qe.waitUntilReady();
const checkers = [queue, P].map(n => {
  const w = new Worker(n, async () => fail('the checker ran a job'),
                       { connection, autorun: false, stalledInterval: 300 });
  w.on('error', e => fail('checker error', String(e)));
  w.startStalledCheckTimer();
  return w;
});

async function pendingTicks() {
  const jobs = await q.getJobs(['delayed', 'waiting', 'prioritized'], 0, -1);
  return jobs.filter(j => j && j.repeatJobKey === 'tick').map(j => j.id);
}
const fp = new FlowProducer({ connection });
const flow = n => fp.add({ name: 'root', queueName: P, data: {}, children:
  Array.from({ length: n }, (_, i) => ({ name: 'kid', queueName: queue, data: { i } })) });
const cArgs = ['--concurrency', '4', '--lease', '1000'];

// 1. Locks renewed: nothing stalled.
await q.upsertJobScheduler('tick', { every: 300 }, { name: 'tick', data: {} });
const f1 = await flow(3);
let cq = cWorker(queue, { log, sleepMs: 1200, args: cArgs });
const cp = cWorker(P, { log, sleepMs: 1200, args: cArgs });
await until(async () => (await qp.getJob(f1.job.id)).finishedOn, 10000, 'flow 1 on C workers');
const p1 = await pendingTicks();
check(p1.length <= 1, 'pending iterations', p1);
// The second iteration finishes about when the flow's root does (each job
// takes 1.2 s): wait for it rather than race it.
await until(async () => (await q.getJobs(['completed'], 0, -1))
  .filter(j => j.repeatJobKey === 'tick').length >= 2, 5000,
'two iterations run by C in phase 1');
check(stalled.length === 0, 'Node marked jobs of a live C worker stalled', stalled);

// 2. kill -9 holding the children of flow 2 and an iteration.
const f2 = await flow(2);
const kids = f2.children.map(c => c.job.id);
const held = await until(async () => {
  const a = (await q.getActive()).map(j => j.id);
  return kids.every(k => a.includes(k)) && a.some(id => id.startsWith('repeat:tick:')) ? a : null;
}, 5000, 'the C worker to hold both children and an iteration');
cq.kill('SIGKILL');
await new Promise(r => cq.on('exit', r));
const w = new Worker(queue, nodeHandler(log, 0), { connection, stalledInterval: 300 });
w.on('error', e => fail('Node worker error', String(e)));
const root2 = await until(async () => {
  const j = await qp.getJob(f2.job.id);
  return j.finishedOn ? j : null;
}, 10000, 'flow 2 to finish after the kill');
check((await root2.getState()) === 'completed', 'flow 2 root state', await root2.getState());
const vals = Object.values(await root2.getChildrenValues());
check(vals.length === 2 && vals.every(v => v.by === 'node'), 'flow 2 children values', vals);
await until(async () => held.every(id => stalled.includes(id)), 3000, 'a stalled event per held job');
const extra = stalled.filter(id => !held.includes(id));
check(extra.length === 0, 'jobs marked stalled that the killed worker did not hold', { extra, held });
for (let i = 0; i < 10; i++) {
  const p = await pendingTicks();
  check(p.length <= 1, 'pending iterations after the kill', p);
  await sleep(100);
}
const byNode = (await q.getJobs(['completed'], 0, -1))
  .filter(j => j.repeatJobKey === 'tick' && j.returnvalue && j.returnvalue.by === 'node');
check(byNode.length >= 2, 'the schedule did not go on on the Node worker', byNode.length);
const heldTick = await q.getJob(held.find(id => id.startsWith('repeat:tick:')));
check((await heldTick.getState()) === 'completed' && heldTick.returnvalue.by === 'node',
      'the held iteration was not rerun by Node', await heldTick.getState());
await w.close();
await stopC(cp);
await Promise.all(checkers.map(c => c.close()));
await qe.close();
await fp.close();
const runs = readFileSync(log, 'utf8').trim().split('\n');
const ids = runs.map(l => l.split(' ').slice(1));
const key = ([qn, id]) => `${qn} ${id}`;
const twice = ids.filter((x, i) => ids.findIndex(y => key(y) === key(x)) !== i)
  .filter(([qn, id]) => !(qn === queue && held.includes(id)));
check(twice.length === 0, 'jobs ran twice', twice.map(key));
await until(async () => (await pendingTicks()).length === 1, 3000, 'one pending iteration at the end');
await q.close();
await qp.close();
console.log(JSON.stringify({ held, stalled, runs: runs.length }));
process.exit(0);
