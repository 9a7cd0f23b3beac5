// audit_flow.mjs QUEUE LOGFILE - Node FlowProducer trees whose roots are in
// QUEUE-p and children in QUEUE-c (both served by a Node Worker and a C
// worker at once) and QUEUE-x (C workers only: the failing, retried and
// removed children, so that lanes' side of each always runs):
//   ok    root <- mid <- leaf, leaf (nested), flaky (fails once, 3 attempts),
//         gone (removeOnComplete): completed, getChildrenValues has all
//         four children's values although "gone" was removed;
//   bad   root <- doomed (failParentOnFailure), kid: failed, "child <key>
//         failed";
//   ign   root <- doomed (ignoreDependencyOnFailure, removeOnFail), kid
//         (removeOnComplete): completed, the failure in
//         getFailedChildrenValues, the kid's value kept;
//   deep  root <- mid (failParentOnFailure) <- doomed (failParentOnFailure):
//         mid failed for doomed, the root failed for mid;
//   rm    root <- mid (removeOnComplete) <- leaf (removeOnComplete): both
//         removed, the root keeps mid's value;
//   mix   root <- mid (ignoreDependencyOnFailure) <- doomed
//         (failParentOnFailure), kid: mid fails for doomed, the root
//         completes with mid's reason in getFailedChildrenValues.
// No job runs twice; every job ends in the state Node reports.
import { Queue, Worker, FlowProducer } from 'bullmq';
import { connection, check, fail, until, nodeHandler, cWorker, stopC } from './audit_lib.mjs';
import { readFileSync } from 'node:fs';

const [queue, log] = process.argv.slice(2);
const P = `${queue}-p`, C = `${queue}-c`, X = `${queue}-x`;
const qp = new Queue(P, { connection }), qc = new Queue(C, { connection });
const qx = new Queue(X, { connection });

const fp = new FlowProducer({ connection });
const add = t => fp.add(t).then(r => r.job.id);
const ok = await add({ name: 'root', queueName: P, data: { t: 'ok' }, children: [
  { name: 'mid', queueName: C, data: {}, children: [
    { name: 'leaf', queueName: C, data: { l: 1 } }, { name: 'leaf', queueName: C, data: { l: 2 } }] },
  { name: 'flaky', queueName: X, data: {}, opts: { attempts: 3, backoff: { type: 'fixed', delay: 50 } } },
  { name: 'gone', queueName: X, data: {}, opts: { removeOnComplete: true } }] });
const bad = await add({ name: 'root', queueName: P, data: { t: 'bad' }, children: [
  { name: 'doomed', queueName: X, data: {}, opts: { failParentOnFailure: true } },
  { name: 'kid', queueName: C, data: {} }] });
const ign = await add({ name: 'root', queueName: P, data: { t: 'ign' }, children: [
  { name: 'doomed', queueName: X, data: {}, opts: { ignoreDependencyOnFailure: true, removeOnFail: true } },
  { name: 'kid', queueName: X, data: {}, opts: { removeOnComplete: true } }] });
const deep = await fp.add({ name: 'root', queueName: P, data: { t: 'deep' }, children: [
  { name: 'mid', queueName: C, data: {}, opts: { failParentOnFailure: true }, children: [
    { name: 'doomed', queueName: X, data: {}, opts: { failParentOnFailure: true } }] }] });
const rm = await add({ name: 'root', queueName: P, data: { t: 'rm' }, children: [
  { name: 'mid', queueName: X, data: {}, opts: { removeOnComplete: true }, children: [
    { name: 'leaf', queueName: X, data: {}, opts: { removeOnComplete: true } }] }] });
const mix = await fp.add({ name: 'root', queueName: P, data: { t: 'mix' }, children: [
  { name: 'mid', queueName: X, data: {}, opts: { ignoreDependencyOnFailure: true }, children: [
    { name: 'doomed', queueName: X, data: {}, opts: { failParentOnFailure: true } }] },
  { name: 'kid', queueName: C, data: {} }] });
await fp.close();
const deepMid = deep.children[0].job.id;

const ws = [P, C].map(n => new Worker(n, nodeHandler(log, 30), { connection, concurrency: 2 }));
ws.forEach(w => w.on('error', e => fail('Node worker error', String(e))));
const cs = [P, C, X].map(n => cWorker(n, { log, sleepMs: 30, args: ['--concurrency', '2'] }));

const roots = { ok, bad, ign, deep: deep.job.id, rm, mix: mix.job.id };
const states = await until(async () => {
  const s = {};
  for (const [k, id] of Object.entries(roots)) s[k] = await (await qp.getJob(id)).getState();
  return Object.values(s).every(v => v === 'completed' || v === 'failed') ? s : null;
}, 20000, 'every root to finish');
await Promise.all(cs.map(c => stopC(c)));
await Promise.all(ws.map(w => w.close()));

const want = { ok: 'completed', bad: 'failed', ign: 'completed', deep: 'failed', rm: 'completed',
               mix: 'completed' };
check(JSON.stringify(states) === JSON.stringify(want), 'root states', states);

const okJob = await qp.getJob(ok);
const vals = await okJob.getChildrenValues();
const names = Object.values(vals).map(v => v && v.name).sort();
check(JSON.stringify(names) === '["flaky","gone","mid"]', 'ok root children values', vals);
const deps = await okJob.getDependenciesCount();
check(deps.processed === 3 && deps.unprocessed === 0, 'ok root dependency counts', deps);
const goneKey = Object.keys(vals).find(k => vals[k].name === 'gone');
check(!(await qx.getJob(goneKey.split(':').pop())), 'removeOnComplete child still stored', goneKey);
const flakyKey = Object.keys(vals).find(k => vals[k].name === 'flaky');
const flaky = await qx.getJob(flakyKey.split(':').pop());
check(flaky.attemptsMade === 2, 'flaky child attempts', flaky.attemptsMade);
const midKey = Object.keys(vals).find(k => vals[k].name === 'mid');
const midVals = Object.values(await (await qc.getJob(midKey.split(':').pop())).getChildrenValues());
check(midVals.length === 2 && midVals.every(v => v.name === 'leaf'), 'nested values', midVals);

const badJob = await qp.getJob(bad);
check(/^child bull:.*-x:\S+ failed$/.test(badJob.failedReason), 'fail-parent reason', badJob.failedReason);

const ignJob = await qp.getJob(ign);
const ignVals = Object.values(await ignJob.getChildrenValues());
check(ignVals.length === 1 && ignVals[0].name === 'kid', 'ignore-dependency values kept', ignVals);
const ignFailed = Object.values(await ignJob.getFailedChildrenValues());
check(ignFailed.length === 1 && /doomed/.test(ignFailed[0]), 'ignored failure kept', ignFailed);
for (const k of [...Object.keys(await ignJob.getFailedChildrenValues()),
                 ...Object.keys(await ignJob.getChildrenValues())])
  check(!(await qx.getJob(k.split(':').pop())), 'removeOnFail/removeOnComplete child still stored', k);

const deepMidJob = await qc.getJob(deepMid);
check(deepMidJob && (await deepMidJob.getState()) === 'failed', 'deep mid state',
      deepMidJob && await deepMidJob.getState());
check(/^child bull:.*-x:\S+ failed$/.test(deepMidJob.failedReason), 'deep mid reason', deepMidJob.failedReason);
const deepRoot = await qp.getJob(deep.job.id);
check(deepRoot.failedReason === `child bull:${C}:${deepMid} failed`, 'deep root reason',
      deepRoot.failedReason);

const rmVals = Object.entries(await (await qp.getJob(rm)).getChildrenValues());
check(rmVals.length === 1 && rmVals[0][1].name === 'mid', 'removed mid value kept by root', rmVals);
check(!(await qx.getJob(rmVals[0][0].split(':').pop())), 'removeOnComplete mid still stored');
const mixJob = await qp.getJob(mix.job.id);
const mixFailed = await mixJob.getFailedChildrenValues();
const mixKey = `bull:${X}:${mix.children[0].job.id}`;
check(Object.keys(mixFailed).length === 1 && /^child bull:.*-x:\S+ failed$/.test(mixFailed[mixKey]),
      'a failed-by-its-child mid ignored by its root', mixFailed);
const mixVals = Object.values(await mixJob.getChildrenValues());
check(mixVals.length === 1 && mixVals[0].name === 'kid', 'mixed root values', mixVals);
const runs = readFileSync(log, 'utf8').trim().split('\n');
const keys = runs.map(l => l.split(' ').slice(1).join(':'));
const twice = keys.filter((k, i) => keys.indexOf(k) !== i && !k.includes(flakyKey.split(':').pop()));
check(twice.length === 0, 'jobs ran twice', twice);
const byC = runs.filter(l => l.startsWith('c ')).length;
check(byC > 0 && byC < runs.length, 'one kind of worker ran nothing', runs);
await qp.close();
await qc.close();
await qx.close();
console.log(JSON.stringify({ states, runs: runs.length, byC }));
process.exit(0);
