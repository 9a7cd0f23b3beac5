// node/drained.mjs - the BullMQ side of lanes' interop cases of the
// 'drained' event: the same jobs run by a Node Worker and by a C worker
// must leave the same 'drained' events in the queue's event stream.
// Imported by tests/interop/interop.mjs (the command dispatch).
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { connection, check } from './common.mjs';

// The scenario: "flaky" fails its first two runs (each retried after a
// fixed 100 ms backoff: it goes to delayed), "plain" completes while
// flaky waits in delayed, "later" is added with a 300 ms delay.
export async function drSetup(queue) {
  const q = new Queue(queue, { connection });
  await q.add('flaky', { n: 1 }, { attempts: 3, backoff: { type: 'fixed', delay: 100 } });
  await q.add('plain', { n: 2 });
  await q.add('later', { n: 3 }, { delay: 300 });
  await q.close();
  console.log(JSON.stringify({ added: 3 }));
}

// What the stream says about 'drained': how many, and the event before
// each (the run that emptied the queue). BullMQ writes one, after the last
// completion, when nothing is waiting, prioritized, active or delayed.
export async function drEvents(queue) {
  const client = new IORedis(connection);
  const rows = await client.xrange(`bull:${queue}:events`, '-', '+');
  await client.quit();
  const names = rows.map(([, f]) => f[f.indexOf('event') + 1]);
  const before = [];
  names.forEach((n, i) => { if (n === 'drained') before.push(names[i - 1] ?? null); });
  const out = { drained: before.length, before, last: names[names.length - 1] ?? null };
  check(names.includes('delayed'), 'no run went to delayed', names);
  console.log(JSON.stringify(out));
}
