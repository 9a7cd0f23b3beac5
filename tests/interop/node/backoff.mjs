// node/backoff.mjs - the BullMQ side of the backoff interop cases
// (tests/interop/cases/backoff.sh): jobs with a jittered backoff and with a
// custom type ('linear'), a stock Worker that fails them with a
// settings.backoffStrategy, and the check of where their retries went.
import { Queue, Worker } from 'bullmq';
import { check, connection, sleep } from './common.mjs';

export const JIT = { type: 'fixed', delay: 60000, jitter: 0.5 };
export const NJIT = 8;

// The jobs a producer adds (tests/interop/backoff_peer.c's `add` is the C twin):
// NJIT "jit" jobs with JIT, one "lin" job of type 'linear'.
export async function backoffAdd(queue) {
  const q = new Queue(queue, { connection });
  for (let i = 0; i < NJIT; i++) await q.add('jit', { i }, { attempts: 2, backoff: JIT });
  await q.add('lin', {}, { attempts: 3, backoff: { type: 'linear', delay: 100 } });
  await q.close();
  console.log(JSON.stringify({ added: NJIT + 1 }));
}

// A stock worker failing every job, its strategy for 'linear': 4321 ms
// times attemptsMade. Until n failures, then closed.
export async function backoffWork(queue, n) {
  let failures = 0;
  const seen = [];
  const w = new Worker(queue, async () => { throw new Error('boom'); }, {
    connection,
    settings: {
      backoffStrategy: (attemptsMade, type, err, job) => {
        seen.push({ attemptsMade, type, err: err.message, name: job.name });
        return type === 'linear' ? 4321 * attemptsMade : -1;
      },
    },
  });
  w.on('failed', () => { failures++; });
  const t0 = Date.now();
  while (failures < Number(n)) {
    check(Date.now() - t0 < 20000, 'worker did not fail the jobs in time', { failures });
    await sleep(20);
  }
  await w.close();
  check(seen.length === 1 && seen[0].type === 'linear' && seen[0].attemptsMade === 1 &&
        seen[0].err === 'boom' && seen[0].name === 'lin', 'backoffStrategy calls', seen);
  console.log(JSON.stringify({ failures, seen }));
}

// Where the retries went after one failed run of each job: every "jit"
// job delayed by a delay in [(1 - j) D, D] (its hash's 'delay', set by the
// retry), not all of them D, its opts.backoff as added; the "lin" job
// delayed by linMs, its type kept.
export async function backoffCheck(queue, linMs) {
  const q = new Queue(queue, { connection });
  const jobs = await q.getJobs(['delayed', 'waiting', 'failed', 'active'], 0, -1);
  let below = 0;
  const delays = [];
  for (const job of jobs) {
    const state = await job.getState();
    check(state === 'delayed', `job ${job.id} (${job.name}) is ${state}`, job.failedReason);
    check(job.attemptsMade === 1 && job.failedReason === 'boom', `job ${job.id} failure`,
          { atm: job.attemptsMade, reason: job.failedReason });
    if (job.name === 'jit') {
      check(JSON.stringify(job.opts.backoff) !== undefined &&
            job.opts.backoff.type === JIT.type && job.opts.backoff.delay === JIT.delay &&
            job.opts.backoff.jitter === JIT.jitter &&
            Object.keys(job.opts.backoff).length === 3, 'opts.backoff', job.opts.backoff);
      const lo = Math.floor(JIT.delay * (1 - JIT.jitter));
      check(job.delay >= lo && job.delay <= JIT.delay, `jit retry delay ${job.delay}`);
      if (job.delay < JIT.delay * 0.9) below++;
      delays.push(job.delay);
    } else {
      check(job.name === 'lin' && job.opts.backoff.type === 'linear' &&
            job.opts.backoff.delay === 100 && Object.keys(job.opts.backoff).length === 2,
            'lin opts.backoff (no jitter key when 0)', job.opts.backoff);
      check(job.delay === Number(linMs), `lin retry delay ${job.delay}, not ${linMs}`);
    }
  }
  check(jobs.length === NJIT + 1, `${jobs.length} jobs`);
  check(below > 0, 'no jittered delay below 0.9 D: the jitter is not applied', delays);
  await q.close();
  console.log(JSON.stringify({ delays }));
}
