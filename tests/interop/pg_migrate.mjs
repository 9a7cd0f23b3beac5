// pg_migrate.mjs - the Node side of tests/postgres/test_pg_migrate.sh: stock BullMQ 6.7's
// PostgreSQL backend (migrate: true) runs the jobs the lanes CLI added to
// queue argv[2], prints each completion as a JSON line "done", then adds
// one job for the C worker and prints its id.
import { withBackend, createPostgresBackend } from 'bullmq';

const url = process.env.LANES_TEST_PG_URL;
const q = process.argv[2];
const want = Number(process.argv[3]);
const connection = { connectionString: url, migrate: true };
const { Queue, Worker } = withBackend(createPostgresBackend);
const done = [];
const worker = new Worker(q, async job => ({ got: job.data, name: job.name }), { connection });
worker.on('completed', (job, rv) => done.push({ id: job.id, name: job.name, data: job.data, rv }));
worker.on('failed', (job, err) => done.push({ id: job && job.id, failed: String(err) }));
const queue = new Queue(q, { connection });
const t0 = Date.now();
while (done.length < want && Date.now() - t0 < 20000) await new Promise(r => setTimeout(r, 50));
for (const d of done) console.log('done ' + JSON.stringify(d));
await worker.close();
const job = await queue.add('from-node', { n: 9 });
console.log('added ' + job.id);
await queue.close();
process.exit(0);
