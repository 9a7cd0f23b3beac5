// audit_freeze.mjs QUEUE LOGFILE - a C worker frozen (SIGSTOP) past its
// lease while it holds a flow child and a scheduler iteration: BullMQ's
// stalled check (a Node Worker, stalledInterval 300) takes them back and the
// Node Worker runs them; the C worker, resumed (SIGCONT) once its program
// finished, must not finish them a second time:
//   - each held job completed once ('completed' events), with the Node
//     Worker's value;
//   - the flow's root (QUEUE-p) counts its child once (processed 1) and
//     completes with the Node value;
//   - the schedule has one pending iteration; the C worker stops cleanly.
import { Queue, Worker, FlowProducer, QueueEvents } from 'bullmq';
import { connection, check, fail, sleep, until, nodeHandler, cWorker, stopC } from './audit_lib.mjs';

const [queue, log] = process.argv.slice(2);
const P = `${queue}-p`;
const q = new Queue(queue, { connection }), qp = new Queue(P, { connection });
const completed = {};
const qe = new QueueEvents(queue, { connection });
qe.on('completed', ({ jobId }) => { completed[jobId] = (completed[jobId] ?? 0) + 1; });
await qe.waitUntilReady();

const fp = new FlowProducer({ connection });
const tree = await fp.add({ name: 'root', queueName: P, data: {}, children: [
  { name: 'kid', queueName: queue, data: {} }] });
await fp.close();
const kid = tree.children[0].job.id;
await q.upsertJobScheduler('tick', { every: 60000 }, { name: 'tick', data: {} });

const cw = cWorker(queue, { log, sleepMs: 2500, args: ['--concurrency', '2', '--lease', '1000'] });
const held = await until(async () => {
  const a = (await q.getActive()).map(j => j.id);
  return a.includes(kid) && a.some(id => id.startsWith('repeat:tick:')) ? a : null;
}, 5000, 'the C worker to hold the child and an iteration');
cw.kill('SIGSTOP');
const nw = new Worker(queue, nodeHandler(log, 0), { connection, stalledInterval: 300 });
nw.on('error', e => fail('Node worker error', String(e)));
const pw = new Worker(P, async job => ({ by: 'node', values: await job.getChildrenValues() }),
                      { connection });
pw.on('error', e => fail('Node parent worker error', String(e)));
for (const id of held)
  await until(async () => (await q.getJob(id)).finishedOn, 6000, `Node to recover and run ${id}`);
await sleep(1500); // the C worker's program has finished by now
cw.kill('SIGCONT');
await sleep(1500); // and it tried to finish its jobs
await stopC(cw);
check(cw.exitCode === 0, 'the resumed C worker did not stop cleanly', { code: cw.exitCode, err: cw.err });
const root = await until(async () => { const j = await qp.getJob(tree.job.id); return j.finishedOn ? j : null; },
                         3000, 'the root to complete');
await nw.close();
await pw.close();
for (const id of held) {
  const j = await q.getJob(id);
  check((await j.getState()) === 'completed' && j.returnvalue.by === 'node',
        'a held job after the freeze', [id, await j.getState(), j.returnvalue]);
  check(completed[id] === 1, 'completed events of a held job', [id, completed[id]]);
}
const deps = await root.getDependenciesCount();
check(deps.processed === 1 && deps.unprocessed === 0, 'root dependency counts', deps);
check((await root.getState()) === 'completed' &&
      Object.values(root.returnvalue.values)[0].by === 'node', 'root value', root.returnvalue);
const pending = (await q.getJobs(['delayed', 'waiting'], 0, -1)).filter(j => j && j.repeatJobKey === 'tick');
check(pending.length === 1, 'pending iterations', pending.map(j => j.id));
await qe.close();
await q.close();
await qp.close();
console.log(JSON.stringify({ held, completed, cerr: cw.err.trim().split('\n').slice(-3) }));
process.exit(0);
