// pg_bullmq.mjs - the BullMQ side of lanes' PostgreSQL interop tests
// (tests/postgres/test_pg_interop.sh): stock bullmq 6.7.0 (package-lock.json)
// through its own PostgreSQL backend (withBackend(createPostgresBackend),
// migrate: true, BullMQ's default schema "bullmq").
//
//   node pg_bullmq.mjs <command> <queue> [args...]
//
//   add QUEUE JOBS        JOBS a JSON array of {name, data, opts}: Queue.add
//                         each in order; prints {"ids":[...]}
//   job QUEUE ID          prints the job as BullMQ reads it: {id, name, state,
//                         returnvalue, failedReason, attemptsMade, data}
//   wait QUEUE STATE N S  until getJobCounts()[STATE] >= N (at most S
//                         seconds, looking every 50 ms); prints the counts
//   work QUEUE N LOG [hang]  a Worker (concurrency 1) until N jobs completed
//                         (at most 60 s): appends each job's id to LOG when it
//                         starts; returns {"node": name, "data": data}; a job
//                         named "flaky" fails ("node flaky attempt K") while
//                         attemptsMade < 2, one named "doomed" always
//                         ("node doomed"); with "hang" every job hangs (a
//                         2 s lock, so a process killed mid-job leaves a
//                         lock that lapses soon; without it, stalled jobs
//                         are looked for every 500 ms)
//   events QUEUE          a QueueEvents: one JSON line per event heard
//                         ({event, jobId, returnvalue?, failedReason?}) on
//                         stdout, "ready" on stderr once listening; stops on
//                         SIGTERM
//   listen QUEUE CHANNEL...  a plain pg client LISTENing on each CHANNEL
//                         (e.g. bullmq_jobs, bullmq_events): one line
//                         "CHANNEL" per NOTIFY whose payload is QUEUE on
//                         stdout, "ready" on stderr once listening; stops
//                         on SIGTERM
//   clean QUEUE           obliterate the queue (force)
//
// Postgres comes from LANES_TEST_PG_URL. A command prints one JSON line on
// success and exits 0; a failed check prints the reason on stderr, exits 1.
import { appendFileSync } from 'node:fs';
import pg from 'pg';
import { withBackend, createPostgresBackend } from 'bullmq';

const url = process.env.LANES_TEST_PG_URL;
const [cmd, queue, ...args] = process.argv.slice(2);
if (!url || !queue) {
  console.error('usage: LANES_TEST_PG_URL=... node pg_bullmq.mjs <command> <queue> [args]');
  process.exit(2);
}
const connection = { connectionString: url, migrate: true };
const { Queue, Worker, QueueEvents } = withBackend(createPostgresBackend);
const sleep = ms => new Promise(r => setTimeout(r, ms));

function fail(msg) {
  console.error(`pg_bullmq ${cmd}: ${msg}`);
  process.exit(1);
}

async function withQueue(fn) {
  const q = new Queue(queue, { connection });
  try {
    await q.waitUntilReady();
    return await fn(q);
  } finally {
    await q.close();
  }
}

async function add(jobs) {
  const ids = await withQueue(async q => {
    const out = [];
    for (const j of JSON.parse(jobs)) out.push((await q.add(j.name, j.data, j.opts || {})).id);
    return out;
  });
  console.log(JSON.stringify({ ids }));
}

async function job(id) {
  const info = await withQueue(async q => {
    const j = await q.getJob(id);
    if (!j) fail(`no job ${id}`);
    return {
      id: j.id,
      name: j.name,
      state: await j.getState(),
      returnvalue: j.returnvalue,
      failedReason: j.failedReason,
      attemptsMade: j.attemptsMade,
      data: j.data,
    };
  });
  console.log(JSON.stringify(info));
}

async function wait(state, n, seconds) {
  const counts = await withQueue(async q => {
    const end = Date.now() + Number(seconds) * 1000;
    for (;;) {
      const c = await q.getJobCounts();
      if ((c[state] || 0) >= Number(n)) return c;
      if (Date.now() > end) fail(`${state} never reached ${n}: ${JSON.stringify(c)}`);
      await sleep(50);
    }
  });
  console.log(JSON.stringify(counts));
}

async function work(n, log, mode) {
  const hang = mode === 'hang';
  let done = 0;
  const w = new Worker(
    queue,
    async j => {
      appendFileSync(log, `${j.id}\n`);
      if (hang) await new Promise(() => {});
      if (j.name === 'flaky' && j.attemptsMade < 2) throw new Error(`node flaky attempt ${j.attemptsMade + 1}`);
      if (j.name === 'doomed') throw new Error('node doomed');
      return { node: j.name, data: j.data };
    },
    hang ? { connection, lockDuration: 2000 } : { connection, stalledInterval: 500 },
  );
  w.on('error', e => console.error(`worker error: ${e.message}`));
  w.on('completed', () => done++);
  const end = Date.now() + 60000;
  while (done < Number(n)) {
    if (Date.now() > end) fail(`only ${done} of ${n} jobs completed in 60 s`);
    await sleep(50);
  }
  await w.close();
  console.log(JSON.stringify({ completed: done }));
}

async function events() {
  const ev = new QueueEvents(queue, { connection });
  const out = (event, a) => console.log(JSON.stringify({ event, ...a }));
  for (const e of ['added', 'waiting', 'active', 'completed', 'failed', 'delayed', 'stalled', 'retries-exhausted'])
    ev.on(e, a => out(e, a));
  await ev.waitUntilReady();
  console.error('ready');
  await new Promise(r => process.on('SIGTERM', r));
  await ev.close();
}

async function listen(channels) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  c.on('notification', m => {
    if (m.payload === queue) console.log(m.channel);
  });
  for (const ch of channels) await c.query(`LISTEN ${pg.escapeIdentifier(ch)}`);
  console.error('ready');
  await new Promise(r => process.on('SIGTERM', r));
  await c.end();
}

async function clean() {
  await withQueue(q => q.obliterate({ force: true }));
  console.log('{}');
}

const guard = setTimeout(() => fail('gave up after 90 s'), 90000);
if (cmd !== 'events' && cmd !== 'listen') guard.unref();
else clearTimeout(guard);
try {
  switch (cmd) {
    case 'add': await add(args[0]); break;
    case 'job': await job(args[0]); break;
    case 'wait': await wait(args[0], args[1], args[2]); break;
    case 'work': await work(args[0], args[1], args[2]); break;
    case 'events': await events(); break;
    case 'listen': await listen(args); break;
    case 'clean': await clean(); break;
    default: fail(`unknown command ${cmd}`);
  }
} catch (e) {
  fail(e && e.stack ? e.stack : String(e));
}
process.exit(0);
