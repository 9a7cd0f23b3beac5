// node/workers.mjs - the BullMQ side of lanes' interop tests: the workers
// connected to a queue, as Node lists them. Imported by
// tests/interop/interop.mjs (the command dispatch).
import { Queue, Worker } from 'bullmq';
import { connection, handler } from './common.mjs';

// Node's Queue.getWorkers(): the names of the connections it lists
// (rawname) and getWorkersCount(), as one JSON line.
export async function getWorkers(queue) {
  const q = new Queue(queue, { connection });
  const workers = await q.getWorkers();
  const count = await q.getWorkersCount();
  await q.close();
  console.log(JSON.stringify({ count, names: workers.map(w => w.rawname) }));
}

// Two idle BullMQ Workers on queue, one named 'nodew' and one unnamed,
// until SIGTERM; "ready" on stderr once both connected.
export async function idleWorkers(queue) {
  const named = new Worker(queue, handler, { connection, name: 'nodew' });
  const plain = new Worker(queue, handler, { connection });
  await named.waitUntilReady();
  await plain.waitUntilReady();
  console.error('ready');
  await new Promise(resolve => process.once('SIGTERM', resolve));
  await named.close();
  await plain.close();
  console.log(JSON.stringify({ closed: 2 }));
}
