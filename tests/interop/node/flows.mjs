// node/flows.mjs - the BullMQ side of lanes' interop tests: flows: the trees,
// FlowProducer, and the checks of a finished tree. Imported by
// tests/interop/interop.mjs (the command dispatch).
import { Queue, FlowProducer } from 'bullmq';
import { writeFileSync } from 'node:fs';
import { connection, fail, check } from './common.mjs';

// Flows. The tree both directions use, as FlowProducer.add takes it (and
// `lanes jobs flow` reads it): a root in <queue>-p with three children in
// <queue>-c, the first with a child of its own; a root whose child
// "doomed" has failParentOnFailure; and one whose "doomed" child has
// ignoreDependencyOnFailure.
function flowTrees(queue) {
  const p = `${queue}-p`, c = `${queue}-c`;
  return [
    { name: 'root', queueName: p, data: { r: 1 }, children: [
      { name: 'mid', queueName: c, data: { m: 1 }, children: [
        { name: 'leaf', queueName: c, data: { l: 1 } }] },
      { name: 'kid', queueName: c, data: { k: 2 } },
      { name: 'kid', queueName: c, data: { k: 3 } }] },
    { name: 'root2', queueName: p, data: { r: 2 }, children: [
      { name: 'doomed', queueName: c, data: {}, opts: { failParentOnFailure: true } },
      { name: 'kid', queueName: c, data: { k: 4 } }] },
    { name: 'root3', queueName: p, data: { r: 3 }, children: [
      { name: 'doomed', queueName: c, data: {}, opts: { ignoreDependencyOnFailure: true } },
      { name: 'kid', queueName: c, data: { k: 5 } }] },
  ];
}

// flow-add: add both trees with FlowProducer; prints the roots' ids.
// flow-json FILE1 FILE2: write them for `lanes jobs flow` instead.
export async function flowAdd(queue) {
  const fp = new FlowProducer({ connection });
  const [t1, t2, t3] = flowTrees(queue);
  const a = await fp.add(t1), b = await fp.add(t2), c = await fp.add(t3);
  await fp.close();
  console.log(JSON.stringify({ ok: a.job.id, bad: b.job.id, ign: c.job.id }));
}

// flow-check OK BAD IGN: root OK completed with every child's value
// (getChildrenValues, keyed by the children's full keys), its child mid
// too; root BAD failed for its failParentOnFailure child; root IGN
// completed with its ignored child's reason in getFailedChildrenValues.
export async function flowCheck(queue, okId, badId, ignId) {
  const q = new Queue(`${queue}-p`, { connection });
  const ok = await q.getJob(okId);
  check(ok, 'no root job', okId);
  const state = await ok.getState();
  check(state === 'completed', 'root state', state);
  check(JSON.stringify(ok.returnvalue) === JSON.stringify({ name: 'root', data: { r: 1 } }),
        'root result', ok.returnvalue);
  const vals = await ok.getChildrenValues();
  const keys = Object.keys(vals);
  check(keys.length === 3, 'root children', vals);
  check(keys.every(k => k.startsWith(`bull:${queue}-c:`)), 'child keys', keys);
  const got = Object.values(vals).map(v => JSON.stringify(v)).sort();
  const want = [{ name: 'kid', data: { k: 2 } }, { name: 'kid', data: { k: 3 } },
                { name: 'mid', data: { m: 1 } }].map(v => JSON.stringify(v)).sort();
  check(JSON.stringify(got) === JSON.stringify(want), 'root children values', got);
  const deps = await ok.getDependenciesCount();
  check(deps.unprocessed === 0 && deps.processed === 3, 'root dependency counts', deps);
  const midKey = keys.find(k => vals[k].name === 'mid');
  const cq = new Queue(`${queue}-c`, { connection });
  const mid = await cq.getJob(midKey.slice(`bull:${queue}-c:`.length));
  const midVals = Object.values(await mid.getChildrenValues());
  check(midVals.length === 1 && midVals[0].name === 'leaf', 'mid children values', midVals);
  const bad = await q.getJob(badId);
  const badState = await bad.getState();
  check(badState === 'failed', 'fail-parent root state', badState);
  check(/^child bull:.*-c:.* failed$/.test(bad.failedReason), 'fail-parent reason',
        bad.failedReason);
  const ign = await q.getJob(ignId);
  const ignState = await ign.getState();
  check(ignState === 'completed', 'ignore-dependency root state', ignState);
  const ignVals = Object.values(await ign.getChildrenValues());
  check(ignVals.length === 1 && ignVals[0].data.k === 5, 'ignore-dependency values', ignVals);
  const failed = Object.values(await ign.getFailedChildrenValues());
  check(failed.length === 1 && /doomed/.test(failed[0]), 'ignored failure', failed);
  await cq.close();
  await q.close();
  console.log(JSON.stringify({ ok: okId, children: keys.length, bad: bad.failedReason }));
}
// flow-json FILE1 FILE2 FILE3: the trees written for `lanes jobs flow`.
export function flowJson(queue, files) {
  flowTrees(queue).forEach((t, i) => writeFileSync(files[i], JSON.stringify(t)));
  console.log(JSON.stringify({ written: 3 }));
}

// flow-rof-add: a root in <queue>-p whose one child in <queue>-c, "doomed",
// is removed as it fails (removeOnFail: true, no failure option); prints
// {"root": ID, "child": ID}.
export async function flowRofAdd(queue) {
  const fp = new FlowProducer({ connection });
  const t = await fp.add({ name: 'root', queueName: `${queue}-p`, data: {}, children: [
    { name: 'doomed', queueName: `${queue}-c`, data: {}, opts: { removeOnFail: true } }] });
  await fp.close();
  console.log(JSON.stringify({ root: t.job.id, child: t.children[0].job.id }));
}

// flow-rof-check ROOT CHILD: the child is gone and its root, left without
// a dependency, was moved to wait (BullMQ's moveToFinished releases it).
export async function flowRofCheck(queue, rootId, childId) {
  const p = new Queue(`${queue}-p`, { connection }), c = new Queue(`${queue}-c`, { connection });
  check(!(await c.getJob(childId)), 'the removed child is still there', childId);
  const root = await p.getJob(rootId);
  check(root, 'no root job', rootId);
  const state = await root.getState();
  check(state === 'waiting', 'root state', state);
  const deps = await root.getDependenciesCount();
  check(deps.unprocessed === 0, 'root dependency counts', deps);
  await p.close(); await c.close();
}
