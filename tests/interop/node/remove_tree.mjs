// node/remove_tree.mjs - the BullMQ side of lanes' interop tests of
// removing a job with its children (`lanes jobs remove --children`, BullMQ's
// queue.remove with removeChildren): the trees, the removal the Node way,
// and a queue pair's keyspace written so two removals can be compared.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker, FlowProducer } from 'bullmq';
import IORedis from 'ioredis';
import { connection, check, sleep } from './common.mjs';

// The tree of queue <queue> and <queue>2, custom ids:
//   p (Q) -> r (Q), s (Q)
//   r     -> c1 (Q2) -> g (Q2); c2 (Q2); k (Q)
//   d (Q, deduplication id "dk"), no flow's
// A Node Worker then runs Q2: g, c1 and c2 complete, so r records c1 and
// c2 as processed and waits for k; c1 records g. The events streams are
// emptied after, so they hold only what the removal writes.
export async function rtSetup(queue) {
  const q2 = `${queue}2`;
  const fp = new FlowProducer({ connection });
  await fp.add({
    name: 'p', queueName: queue, opts: { jobId: 'p' }, children: [
      { name: 'r', queueName: queue, opts: { jobId: 'r' }, children: [
        { name: 'c1', queueName: q2, opts: { jobId: 'c1' },
          children: [{ name: 'g', queueName: q2, opts: { jobId: 'g' } }] },
        { name: 'c2', queueName: q2, opts: { jobId: 'c2' } },
        { name: 'k', queueName: queue, opts: { jobId: 'k' } },
      ] },
      { name: 's', queueName: queue, opts: { jobId: 's' } },
    ],
  });
  await fp.close();
  const q = new Queue(queue, { connection }); // a flow node may not hold one
  await q.add('d', {}, { jobId: 'd', deduplication: { id: 'dk' } });
  await q.close();
  await rtRun(q2, ['g', 'c1', 'c2']);
  const c = new IORedis(connection);
  check(await c.get(`bull:${queue}:de:dk`) === 'd', 'd holds no deduplication id');
  await c.quit();
  await rtTrim(queue);
}

// A Node Worker runs queue until the jobs ids completed.
export async function rtRun(queue, ids) {
  const q = new Queue(queue, { connection });
  const w = new Worker(queue, async job => ({ by: 'node', name: job.name }), { connection });
  const t0 = Date.now();
  for (;;) {
    const states = await Promise.all(ids.map(id => q.getJobState(id)));
    if (states.every(s => s === 'completed')) break;
    check(Date.now() - t0 < 10000, 'the Node Worker did not finish', states);
    await sleep(50);
  }
  await w.close();
  await q.close();
}

// Empty the events streams of <queue> and <queue>2 (the keys stay) and
// drop their markers (how long a worker took to pop one varies), so the
// keyspace after a removal shows what the removal wrote there.
export async function rtTrim(queue) {
  const c = new IORedis(connection);
  for (const name of [queue, `${queue}2`]) {
    await c.xtrim(`bull:${name}:events`, 'MAXLEN', 0);
    await c.del(`bull:${name}:marker`);
  }
  await c.quit();
  console.log(JSON.stringify({ ok: true }));
}

// BullMQ's queue.remove(id) (removeChildren: its default): its code.
export async function rtRemove(queue, id) {
  const q = new Queue(queue, { connection });
  const code = await q.remove(id);
  await q.close();
  console.log(JSON.stringify({ code }));
}

// Root "big" of queue with 1000 children: 1001 jobs, past lanes' cap.
export async function rtBig(queue) {
  const fp = new FlowProducer({ connection });
  const children = [];
  for (let i = 0; i < 1000; i++) children.push({ name: 'leaf', queueName: queue });
  await fp.add({ name: 'big', queueName: queue, opts: { jobId: 'big' }, children });
  await fp.close();
  console.log(JSON.stringify({ ok: true }));
}

// Root "hr" of queue with children "h" (<queue>2, held by a Node Worker
// until SIGTERM) and "f" (queue); says "held" on stderr once h is active.
export async function rtHold(queue) {
  const q2 = `${queue}2`;
  const fp = new FlowProducer({ connection });
  await fp.add({ name: 'hr', queueName: queue, opts: { jobId: 'hr' }, children: [
    { name: 'h', queueName: q2, opts: { jobId: 'h' } },
    { name: 'f', queueName: queue, opts: { jobId: 'f' } },
  ] });
  await fp.close();
  let release;
  const held = new Promise(r => { release = r; });
  const w = new Worker(q2, async () => { console.error('held'); await held; return 1; },
                       { connection });
  await new Promise(r => process.on('SIGTERM', r));
  release();
  await w.close();
}

// Keys of queue and <queue>2 by name (queue -> Q, <queue>2 -> Q2): type
// and the parts that do not hold times (a hash's fields, a sorted set's
// members, a stream's entries without their ids), the queue names inside
// them written the same way.
export async function rtKeys(queue) {
  const c = new IORedis(connection);
  const norm = s => s.split(`bull:${queue}2:`).join('bull:Q2:').split(`bull:${queue}:`).join('bull:Q:')
    .split(`"queueKey":"bull:${queue}2"`).join('"queueKey":"bull:Q2"')
    .split(`"queueKey":"bull:${queue}"`).join('"queueKey":"bull:Q"');
  const out = {};
  for (const name of [queue, `${queue}2`]) {
    let cursor = '0';
    do {
      const [next, keys] = await c.scan(cursor, 'MATCH', `bull:${name}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        if (key.endsWith(':stalled-check')) continue;
        out[norm(key)] = await describe(c, key, norm);
      }
    } while (cursor !== '0');
  }
  await c.quit();
  console.log(JSON.stringify(Object.fromEntries(Object.entries(out).sort())));
}

async function describe(c, key, norm) {
  const type = await c.type(key);
  if (type === 'hash') {
    const h = await c.hgetall(key);
    const keep = ['parentKey', 'deid', 'name'];
    if (key.endsWith(':meta')) delete h.version; // what a Node Queue writes as it connects
    return [type, Object.keys(h).map(norm).sort(),
      keep.filter(f => f in h).map(f => `${f}=${norm(h[f])}`)];
  }
  if (type === 'zset') return [type, (await c.zrange(key, 0, -1)).map(norm).sort()];
  if (type === 'set') return [type, (await c.smembers(key)).map(norm).sort()];
  if (type === 'list') return [type, (await c.lrange(key, 0, -1)).map(norm)];
  if (type === 'string') return [type, key.endsWith(':lock') ? 'token' : norm(await c.get(key))];
  if (type === 'stream') return [type, (await c.xrange(key, '-', '+')).map(([, f]) => f.map(norm))];
  return [type];
}
