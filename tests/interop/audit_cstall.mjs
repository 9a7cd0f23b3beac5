// audit_cstall.mjs QUEUE LOGFILE - the reverse of audit_stall: a Node Worker
// (a child process, lockDuration 1000) killed with kill -9 while it holds
// flow children and a scheduler iteration of QUEUE; lanes' stalled check
// (`lanes worker --max-stalled 0 --stalled-interval 300`) on QUEUE treats
// them as BullMQ 6.7's checker would: the children (not repeatable) fail,
// the iteration is requeued (BullMQ never fails a repeatable job) and the
// C worker runs it; the flows' parents (QUEUE-p, a C worker) follow their
// children's options:
//   - failParentOnFailure: the parent fails, "child <key> failed";
//   - ignoreDependencyOnFailure: the parent completes, the stall in
//     getFailedChildrenValues;
//   - a plain child: the parent stays waiting-children (BullMQ's default);
//   - each held child's failedReason is BullMQ's text exactly;
//   - the iteration completes (stalled once, no failedReason), run by the
//     C worker, and the schedule still has one pending iteration.
import { Queue, FlowProducer } from 'bullmq';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connection, check, fail, sleep, until, cWorker, stopC } from './audit_lib.mjs';

const [queue, log] = process.argv.slice(2);
const P = `${queue}-p`;
const q = new Queue(queue, { connection }), qp = new Queue(P, { connection });
const fp = new FlowProducer({ connection });
const tree = (name, opts) => fp.add({ name, queueName: P, data: {}, children: [
  { name: 'held', queueName: queue, data: {}, opts }] });
const fpof = await tree('fpof', { failParentOnFailure: true });
const idof = await tree('idof', { ignoreDependencyOnFailure: true });
const plain = await tree('plain', {});
await fp.close();
await q.upsertJobScheduler('tick', { every: 60000 }, { name: 'tick', data: {} });
const heldIds = [fpof, idof, plain].map(t => t.children[0].job.id);

// The Node Worker to kill: takes everything on QUEUE and sleeps on it.
const script = `
import { Worker } from 'bullmq';
const w = new Worker(process.argv[1], async () => { await new Promise(r => setTimeout(r, 60000)); },
  { connection: JSON.parse(process.argv[2]), concurrency: 8, lockDuration: 1000, stalledInterval: 60000 });
w.on('active', j => console.log(j.id));
`;
const nodew = spawn(process.execPath, ['--input-type=module', '-e', script, queue, JSON.stringify(connection)],
                    { cwd: dirname(fileURLToPath(import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] });
let took = '';
nodew.stdout.on('data', d => { took += d; });
const tickId = await until(async () => {
  const a = (await q.getActive()).map(j => j.id);
  const t = a.find(id => id.startsWith('repeat:tick:'));
  return heldIds.every(id => a.includes(id)) && t ? t : null;
}, 10000, 'the Node worker to hold the three children and an iteration');
// A BullMQ worker makes the next iteration in a call of its own after the
// take (upsertJobScheduler), so a kill between the two would end the
// schedule whoever checks for stalls: kill it only once that call is in.
await until(async () => (await q.getJobs(['delayed', 'waiting'], 0, -1))
  .some(j => j && j.repeatJobKey === 'tick' && j.id !== tickId), 10000,
  'the Node worker to make the next iteration');
nodew.kill('SIGKILL');
await new Promise(r => nodew.on('exit', r));

const cw = cWorker(queue, { log, args: ['--max-stalled', '0', '--stalled-interval', '300', '--concurrency', '2'] });
const cp = cWorker(P, { log, args: ['--concurrency', '2'] });
for (const id of [...heldIds, tickId])
  await until(async () => (await q.getJob(id)).finishedOn, 8000, `held job ${id} to be finished`);
const states = {};
for (const id of heldIds) {
  const j = await q.getJob(id);
  states[id] = [await j.getState(), j.failedReason];
  // BullMQ's own text, exactly: Node code compares failedReason with it.
  check(states[id][0] === 'failed' && j.failedReason === 'job stalled more than allowable limit',
        'held job after the stall', states[id]);
}
// Past --max-stalled 0 too, a scheduler's iteration is requeued (no defa)
// and the C worker's take runs it.
const tj = await q.getJob(tickId);
states[tickId] = [await tj.getState(), tj.failedReason, tj.stalledCounter];
check(states[tickId][0] === 'completed' && !tj.failedReason && tj.stalledCounter === 1,
      'the held iteration after the stall', states[tickId]);
check(readFileSync(log, 'utf8').split('\n').includes(`c ${queue} ${tickId}`),
      'the C worker ran the requeued iteration');
const fj = await until(async () => { const j = await qp.getJob(fpof.job.id); return j.finishedOn ? j : null; },
                       5000, 'the failParentOnFailure parent to fail');
check((await fj.getState()) === 'failed' && fj.failedReason === `child bull:${queue}:${heldIds[0]} failed`,
      'failParentOnFailure parent', { state: await fj.getState(), reason: fj.failedReason });
const ij = await until(async () => { const j = await qp.getJob(idof.job.id); return j.finishedOn ? j : null; },
                       5000, 'the ignoreDependencyOnFailure parent to complete');
check((await ij.getState()) === 'completed', 'ignoreDependencyOnFailure parent', await ij.getState());
const failed = Object.values(await ij.getFailedChildrenValues());
check(failed.length === 1 && failed[0] === 'job stalled more than allowable limit', 'ignored stall reason',
      failed);
await sleep(500);
const pj = await qp.getJob(plain.job.id);
check((await pj.getState()) === 'waiting-children', 'plain parent', await pj.getState());
const next = (await q.getJobs(['delayed', 'waiting'], 0, -1)).filter(j => j && j.repeatJobKey === 'tick');
check(next.length === 1, 'pending iterations after the stall', next.map(j => j.id));
await stopC(cw);
await stopC(cp);
await q.close();
await qp.close();
console.log(JSON.stringify({ states, next: next[0].id, took: took.trim().split('\n').length }));
process.exit(0);
