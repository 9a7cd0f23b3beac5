// pg_probe.mjs - what stock BullMQ 6.7 writes to PostgreSQL: a probe for the
// PostgreSQL store's groundwork (docs/internals/postgres.md), not a test.
//
//   scripts/with-services.sh node tests/interop/pg_probe.mjs [--keep]
//
// With LANES_TEST_PG_URL (a throwaway database: scripts/with-services.sh
// starts one), it runs BullMQ's own PostgreSQL backend (createPostgresBackend
// through withBackend, migrate: true, the default schema "bullmq"): a Queue
// and Workers on three queues, a QueueEvents, a FlowProducer; adds a plain
// job, a delayed one, prioritized ones, a LIFO one, a custom id, a job that
// retries with a fixed backoff, one that fails for good, one removed on
// completion, a deduplicated pair, a flow (a parent with a child in its own
// queue and one in another), a job scheduler (every 60 s), and a job it
// claims itself and abandons (so a Worker's stalled check reclaims it); sets
// a global concurrency, pauses and resumes; waits (at most 60 s) until the
// Workers have run what they can; then prints what is in the database:
// every table with its columns and types, constraints, indexes, sequences,
// enum types, functions, triggers, the migration ledger, the rows of each
// table for the probe's queues, the sessions BullMQ keeps (with the LISTEN
// each last ran) and the NOTIFY channels and payloads a LISTEN of its own
// heard. Last it removes its queues (obliterate) unless --keep. Exit 0 when
// everything it waited for happened, 1 otherwise (it says what).
import pg from 'pg';
import { withBackend, createPostgresBackend } from 'bullmq';

const url = process.env.LANES_TEST_PG_URL;
if (!url) {
  console.error('pg_probe: LANES_TEST_PG_URL is not set (run it under scripts/with-services.sh)');
  process.exit(2);
}
const keep = process.argv.includes('--keep');
const SCHEMA = 'bullmq';
const tag = `p${process.pid}`;
const Q = `${tag}-main`; // the main queue
const QB = `${tag}-other`; // a flow child in another queue
const QS = `${tag}-stall`; // the job abandoned by the probe
const connection = { connectionString: url, migrate: true };
const { Queue, Worker, QueueEvents, FlowProducer } = withBackend(createPostgresBackend);
const sleep = ms => new Promise(r => setTimeout(r, ms));
const problems = [];

function section(title) {
  console.log(`\n=== ${title}`);
}
function rows(list) {
  if (list.length === 0) console.log('(none)');
  for (const r of list) console.log(JSON.stringify(r));
}

// Heard notifications, per channel and payload (the payload is a queue name).
async function listener() {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const heard = new Map();
  c.on('notification', m => {
    const k = `${m.channel} ${m.payload}`;
    heard.set(k, (heard.get(k) || 0) + 1);
  });
  for (const ch of ['bullmq_jobs', 'bullmq_events', 'bullmq_relay']) await c.query(`LISTEN ${ch}`);
  return { c, heard };
}

async function waitFor(what, fn, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return true;
    await sleep(100);
  }
  problems.push(`timed out waiting for ${what}`);
  return false;
}

async function produce(queue, flow) {
  await queue.add('plain', { n: 1 });
  await queue.add('custom-id', { n: 2 }, { jobId: 'my-id' });
  await queue.add('delayed-long', { n: 3 }, { delay: 600000 });
  await queue.add('delayed-short', { n: 4 }, { delay: 300 });
  await queue.add('prio-5', { n: 5 }, { priority: 5 });
  await queue.add('prio-1', { n: 6 }, { priority: 1 });
  await queue.add('lifo', { n: 7 }, { lifo: true });
  await queue.add('flaky', { n: 8 }, { attempts: 3, backoff: { type: 'fixed', delay: 200 } });
  await queue.add('doomed', { n: 9 }, { attempts: 2, backoff: { type: 'exponential', delay: 100 } });
  await queue.add('gone', { n: 10 }, { removeOnComplete: true });
  await queue.add('dedup', { n: 11 }, { deduplication: { id: 'dd', ttl: 600000 } });
  await queue.add('dedup', { n: 12 }, { deduplication: { id: 'dd', ttl: 600000 } });
  await queue.addBulk([
    { name: 'bulk', data: { n: 13 } },
    { name: 'bulk', data: { n: 14 }, opts: { priority: 2 } },
  ]);
  await flow.add({
    name: 'parent',
    queueName: Q,
    data: { n: 15 },
    children: [
      { name: 'child', queueName: Q, data: { n: 16 }, opts: { failParentOnFailure: true } },
      { name: 'child-other', queueName: QB, data: { n: 17 } },
    ],
  });
  await queue.upsertJobScheduler('every-minute', { every: 60000 }, { name: 'tick', data: { n: 18 } });
}

// A job of QS claimed by the probe through BullMQ's own move_to_active with
// a 500 ms lock, then abandoned: a Worker's stalled check reclaims it.
async function abandon(stallQueue, client) {
  await stallQueue.add('abandoned', { n: 19 });
  const r = await client.query(`SELECT id FROM ${SCHEMA}.move_to_active($1, $2, $3, $4, $5, NULL, NULL)`, [
    QS,
    'probe-token',
    500,
    Date.now(),
    'pg_probe',
  ]);
  if (r.rows.length !== 1) problems.push('could not claim the job to abandon');
}

async function processor(job) {
  await job.log(`running ${job.name}`);
  await job.updateProgress(50);
  if (job.name === 'flaky' && job.attemptsMade === 0) throw new Error('flaky: first attempt fails');
  if (job.name === 'doomed') throw new Error('doomed: always fails');
  if (job.name === 'child') return { child: job.id };
  return { done: job.name };
}

async function dumpSchema(c) {
  section('migration ledger');
  rows((await c.query(`SELECT version, name, min_client_version FROM ${SCHEMA}.migration ORDER BY version`)).rows);
  section('enum types');
  rows(
    (
      await c.query(
        `SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder) AS labels
           FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
           JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = $1 GROUP BY t.typname`,
        [SCHEMA],
      )
    ).rows,
  );
  section('tables and columns (name type nullable default)');
  const cols = await c.query(
    `SELECT table_name, column_name, CASE WHEN data_type = 'USER-DEFINED' THEN udt_name
            WHEN data_type = 'ARRAY' THEN udt_name ELSE data_type END AS type,
            is_nullable, column_default
       FROM information_schema.columns WHERE table_schema = $1
      ORDER BY table_name, ordinal_position`,
    [SCHEMA],
  );
  let table = '';
  for (const r of cols.rows) {
    if (r.table_name !== table) console.log(`${(table = r.table_name)}:`);
    const def = r.column_default ? ` default ${r.column_default}` : '';
    console.log(`  ${r.column_name} ${r.type}${r.is_nullable === 'NO' ? ' not null' : ''}${def}`);
  }
  section('constraints');
  rows(
    (
      await c.query(
        `SELECT cl.relname AS table, co.conname, pg_get_constraintdef(co.oid) AS def
           FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid
           JOIN pg_namespace n ON n.oid = cl.relnamespace WHERE n.nspname = $1 ORDER BY 1, 2`,
        [SCHEMA],
      )
    ).rows,
  );
  section('indexes');
  rows((await c.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY tablename, indexname`, [SCHEMA])).rows);
  section('sequences (the per-queue id sequences are bullmq_jid_<md5 of the queue name>)');
  rows(
    (
      await c.query(
        `SELECT sequencename, last_value, increment_by, cache_size FROM pg_sequences
          WHERE schemaname = $1 ORDER BY 1`,
        [SCHEMA],
      )
    ).rows,
  );
  section('functions (name(args) -> result)');
  const fns = await c.query(
    `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') -> ' ||
            pg_get_function_result(p.oid) AS f
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1`,
    [SCHEMA],
  );
  for (const r of fns.rows) console.log(r.f);
  section('triggers');
  rows(
    (
      await c.query(
        `SELECT tgname, tgrelid::regclass::text AS on_table FROM pg_trigger t
           JOIN pg_class cl ON cl.oid = t.tgrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
          WHERE n.nspname = $1 AND NOT t.tgisinternal`,
        [SCHEMA],
      )
    ).rows,
  );
}

async function dumpRows(c) {
  const queues = [Q, QB, QS];
  const jobCols = `queue, id, seq, name, state, priority, delay_ms, max_attempts, attempts_made,
    attempts_started, progress, return_value, failed_reason, left(stacktrace::text, 60) AS stacktrace,
    deferred_failure, processed_by, added_at_ms, process_at_ms, processed_at_ms, finished_at_ms,
    lock_token, locked_until_ms, stalled_count, stalled_marked, dedup_id, scheduler_id, parent_queue,
    parent_id, parent_key, pending_deps, data, opts`;
  const tables = [
    ['job', `SELECT ${jobCols} FROM ${SCHEMA}.job WHERE queue = ANY($1) ORDER BY queue, seq`],
    ['job_log', `SELECT * FROM ${SCHEMA}.job_log WHERE queue = ANY($1) ORDER BY queue, job_id, idx`],
    ['job_dependency', `SELECT * FROM ${SCHEMA}.job_dependency WHERE parent_queue = ANY($1)`],
    ['event', `SELECT * FROM ${SCHEMA}.event WHERE queue = ANY($1) ORDER BY id`],
    ['meta', `SELECT * FROM ${SCHEMA}.meta WHERE queue = ANY($1) ORDER BY queue, field`],
    ['metrics', `SELECT * FROM ${SCHEMA}.metrics WHERE queue = ANY($1)`],
    ['rate_limit', `SELECT * FROM ${SCHEMA}.rate_limit WHERE queue = ANY($1)`],
    ['dedup', `SELECT * FROM ${SCHEMA}.dedup WHERE queue = ANY($1)`],
    ['dedup_next', `SELECT * FROM ${SCHEMA}.dedup_next WHERE queue = ANY($1)`],
    ['scheduler', `SELECT * FROM ${SCHEMA}.scheduler WHERE queue = ANY($1)`],
  ];
  for (const [name, sql] of tables) {
    section(`rows of ${name}`);
    rows((await c.query(sql, [queues])).rows);
  }
  section('other tables (row counts; relay_* belong to BullMQ relay, not queues)');
  const others = await c.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'
        AND table_name <> ALL($2) ORDER BY 1`,
    [SCHEMA, tables.map(t => t[0]).concat(['migration'])],
  );
  for (const r of others.rows) {
    const n = await c.query(`SELECT count(*)::int AS n FROM ${SCHEMA}."${r.table_name}"`);
    console.log(`${r.table_name}: ${n.rows[0].n}`);
  }
}

async function dumpSessions(c, heard) {
  section('sessions on this database (application_name, state, last query)');
  rows(
    (
      await c.query(
        `SELECT application_name, state,
                left(btrim(regexp_replace(regexp_replace(query, '--[^\\n]*', '', 'g'), '\\s+', ' ', 'g')), 60)
                  AS last_query
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
          ORDER BY application_name, state`,
      )
    ).rows,
  );
  section('NOTIFY heard by the probe (channel payload: count)');
  if (heard.size === 0) console.log('(none)');
  for (const [k, n] of [...heard].sort()) console.log(`${k}: ${n}`);
}

async function main() {
  const { c, heard } = await listener();
  const queue = new Queue(Q, { connection });
  const other = new Queue(QB, { connection });
  const stall = new Queue(QS, { connection });
  const flow = new FlowProducer({ connection });
  const events = new QueueEvents(Q, { connection });
  const seen = [];
  for (const e of ['added', 'waiting', 'active', 'completed', 'failed', 'delayed', 'stalled'])
    events.on(e, a => seen.push(`${e}:${a.jobId}`));
  await queue.waitUntilReady();
  await events.waitUntilReady();
  await queue.setGlobalConcurrency(4);
  await queue.pause();
  await produce(queue, flow);
  await abandon(stall, c);
  const counts0 = await queue.getJobCounts();
  await queue.resume();
  const wopts = { connection, concurrency: 2, metrics: { maxDataPoints: 60 }, limiter: { max: 1000, duration: 1000 } };
  const workers = [
    new Worker(Q, processor, { ...wopts, name: 'probe-worker' }),
    new Worker(QB, processor, { connection }),
    new Worker(QS, processor, { connection, stalledInterval: 1000 }),
  ];
  workers.forEach(w => w.on('error', e => problems.push(`worker error: ${e.message}`)));
  // plain custom-id prio-5 prio-1 lifo flaky gone dedup bulk bulk child parent tick
  await waitFor('13 completions in the main queue', async () => (await queue.getCompletedCount()) >= 13, 60000);
  await waitFor('the doomed job to fail', async () => (await queue.getFailedCount()) >= 1, 30000);
  await waitFor('the abandoned job to be reclaimed and run', async () => (await stall.getCompletedCount()) >= 1, 30000);
  await waitFor('QueueEvents to hear a completion', async () => seen.some(s => s.startsWith('completed:')), 10000);
  const counts1 = await queue.getJobCounts();
  const sessions = c; // the dump runs while the Workers still hold their connections
  section('counts (getJobCounts) before resume, and at the end');
  console.log(JSON.stringify(counts0));
  console.log(JSON.stringify(counts1));
  await dumpSchema(sessions);
  await dumpRows(sessions);
  await dumpSessions(sessions, heard);
  section('QueueEvents heard (event:jobId)');
  console.log(seen.join(' '));
  await Promise.all(workers.map(w => w.close()));
  await events.close();
  if (!keep) {
    for (const q of [queue, other, stall]) {
      await q.removeJobScheduler('every-minute').catch(() => {});
      await q.obliterate({ force: true });
    }
  }
  await Promise.all([queue.close(), other.close(), stall.close(), flow.close()]);
  await c.end();
  section('result');
  if (problems.length) {
    console.log(problems.join('\n'));
    process.exit(1);
  }
  console.log(keep ? 'ok (rows kept: --keep)' : 'ok (the probe queues were obliterated)');
}

const guard = setTimeout(() => {
  console.error('pg_probe: gave up after 180 s');
  process.exit(1);
}, 180000);
guard.unref();
main().catch(e => {
  console.error('pg_probe:', e && e.stack ? e.stack : e);
  process.exit(1);
});
