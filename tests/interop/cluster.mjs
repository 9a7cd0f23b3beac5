// cluster.mjs - the BullMQ side of lanes' Redis Cluster tests
// (tests/redis/test_cluster.sh): stock bullmq 6.7.0 on an ioredis Cluster, with
// BullMQ's cluster prefix '{bull}' (every key of a queue in one slot).
//
//   node cluster.mjs add QUEUE N       N jobs named "n", data {i}
//   node cluster.mjs work QUEUE N LOG  a Worker runs jobs until N completed,
//                                      appending each job's id to LOG
//   node cluster.mjs counts QUEUE      getJobCounts as JSON
//
// The cluster comes from LANES_TEST_REDIS_CLUSTER_URL (any node).
import { Queue, Worker } from 'bullmq';
import { Cluster } from 'ioredis';
import { appendFileSync } from 'node:fs';

const url = new URL(process.env.LANES_TEST_REDIS_CLUSTER_URL ?? 'redis://127.0.0.1:7000/0');
const cluster = () =>
  new Cluster([{ host: url.hostname, port: Number(url.port) }], {
    redisOptions: { maxRetriesPerRequest: null },
  });
const prefix = '{bull}';

const [cmd, name, ...args] = process.argv.slice(2);
if (cmd === 'add') {
  const conn = cluster();
  const q = new Queue(name, { connection: conn, prefix });
  const n = Number(args[0]);
  for (let i = 0; i < n; i += 500) {
    const jobs = [];
    for (let j = i; j < Math.min(n, i + 500); j++) jobs.push({ name: 'n', data: { i: j } });
    await q.addBulk(jobs);
  }
  console.log(JSON.stringify({ added: n }));
  await q.close();
  await conn.quit();
} else if (cmd === 'work') {
  const want = Number(args[0]);
  const log = args[1];
  let done = 0;
  const conn = cluster();
  let finish;
  const finished = new Promise(r => (finish = r));
  const w = new Worker(
    name,
    async job => {
      appendFileSync(log, `${job.id}\n`);
      return { i: job.data.i };
    },
    { connection: conn, prefix, concurrency: 4 },
  );
  w.on('completed', () => {
    if (++done >= want) finish();
  });
  const timer = setTimeout(() => finish(), 60000);
  await finished;
  clearTimeout(timer);
  await w.close();
  await conn.quit();
  console.log(JSON.stringify({ completed: done }));
  process.exit(done >= want ? 0 : 1);
} else if (cmd === 'counts') {
  const conn = cluster();
  const q = new Queue(name, { connection: conn, prefix });
  console.log(JSON.stringify(await q.getJobCounts()));
  await q.close();
  await conn.quit();
} else {
  console.error(`cluster.mjs: unknown command ${cmd}`);
  process.exit(2);
}
