// audit_children.mjs QUEUE LOGFILE - parents a Node team runs in Node with
// children a C worker runs (QUEUE-p: Node Worker only; QUEUE-c: C worker
// only):
//   - step jobs: a Node processor adds two children (queue.add with
//     opts.parent), then job.moveToWaitingChildren(token) and throws
//     WaitingChildrenError; once the C worker ran them the parent runs
//     again and returns getChildrenValues (both children's results);
//   - removeDependencyOnFailure: a FlowProducer root whose child fails on
//     the C worker completes, the failed child in neither
//     getChildrenValues nor getFailedChildrenValues;
//   - a child added with opts.parent to a root already waiting for a
//     FlowProducer child: the root waits for both;
//   - a child with failParentOnFailure and attempts 2 that fails on C: its
//     Node parent fails only after the last attempt.
import { Queue, Worker, FlowProducer, WaitingChildrenError } from 'bullmq';
import { connection, check, fail, until, cWorker, stopC } from './audit_lib.mjs';

const [queue, log] = process.argv.slice(2);
const P = `${queue}-p`, C = `${queue}-c`;
const qp = new Queue(P, { connection }), qc = new Queue(C, { connection });

const nw = new Worker(P, async (job, token) => {
  if (job.name === 'step' && !job.data.step) {
    for (const i of [1, 2])
      await qc.add('kid', { i }, { parent: { id: job.id, queue: job.queueQualifiedName } });
    await job.updateData({ step: 1 });
    if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
  }
  return { by: 'node', values: Object.values(await job.getChildrenValues()) };
}, { connection, concurrency: 2 });
nw.on('error', e => fail('Node worker error', String(e)));
const cw = cWorker(C, { log, sleepMs: 100, args: ['--concurrency', '2'] });

const step = await qp.add('step', {});
const fp = new FlowProducer({ connection });
const rd = await fp.add({ name: 'rd', queueName: P, data: {}, children: [
  { name: 'doomed', queueName: C, data: {}, opts: { removeDependencyOnFailure: true } },
  { name: 'kid', queueName: C, data: { k: 'rd' } }] });
const late = await fp.add({ name: 'late', queueName: P, data: {}, children: [
  { name: 'kid', queueName: C, data: { k: 'first' } }] });
await qc.add('kid', { k: 'added' }, { parent: { id: late.job.id, queue: `bull:${P}` } });
const fpa = await fp.add({ name: 'fpa', queueName: P, data: {}, children: [
  { name: 'doomed', queueName: C, data: {},
    opts: { failParentOnFailure: true, attempts: 2, backoff: { type: 'fixed', delay: 300 } } }] });
await fp.close();

const ids = { step: step.id, rd: rd.job.id, late: late.job.id, fpa: fpa.job.id };
// fpa's parent must still wait while its child waits for the second attempt.
await until(async () => (await qc.getJob(fpa.children[0].job.id)).attemptsMade === 1, 5000,
            "fpa's child's first attempt");
const mid = await (await qp.getJob(ids.fpa)).getState();
check(mid === 'waiting-children', 'fail-parent root after the first of 2 attempts', mid);
const jobs = await until(async () => {
  const js = await Promise.all(Object.values(ids).map(id => qp.getJob(id)));
  return js.every(j => j.finishedOn) ? js : null;
}, 10000, 'every parent to finish');
await stopC(cw);
await nw.close();
const [s, r, l, f] = jobs;
const vals = j => j.returnvalue.values.map(v => v && (v.name + ':' + v.by)).sort();
check((await s.getState()) === 'completed' && JSON.stringify(vals(s)) === '["kid:c","kid:c"]',
      'step parent', { state: await s.getState(), rv: s.returnvalue });
check(s.data.step === 1, 'step parent data', s.data);
check((await r.getState()) === 'completed' && JSON.stringify(vals(r)) === '["kid:c"]',
      'removeDependencyOnFailure parent', { state: await r.getState(), rv: r.returnvalue });
const rf = await r.getFailedChildrenValues();
check(Object.keys(rf).length === 0, 'removeDependencyOnFailure kept the failure', rf);
const rdeps = await r.getDependenciesCount();
check(rdeps.processed === 1 && rdeps.unprocessed === 0, 'removeDependencyOnFailure counts', rdeps);
check((await l.getState()) === 'completed' && l.returnvalue.values.length === 2,
      'late-added child parent', l.returnvalue);
check((await f.getState()) === 'failed' && /^child bull:.*-c:\S+ failed$/.test(f.failedReason),
      'fail-parent root', { state: await f.getState(), reason: f.failedReason });
const fchild = await qc.getJob(fpa.children[0].job.id);
check(fchild.attemptsMade === 2, 'fail-parent child attempts', fchild.attemptsMade);
await qp.close();
await qc.close();
console.log(JSON.stringify({ step: s.returnvalue, fpa: f.failedReason }));
process.exit(0);
