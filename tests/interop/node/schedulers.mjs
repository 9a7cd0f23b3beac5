// node/schedulers.mjs - the BullMQ side of lanes' interop tests: job
// schedulers: Node's upsert and what it reads back. Imported by
// tests/interop/interop.mjs (the command dispatch).
import { Queue } from 'bullmq';
import { connection, check } from './common.mjs';

// Job schedulers (the sched_* cases). Upsert scheduler id with repeat
// options (JSON) and a job template named "tick" with data (JSON).
export async function schedUpsert(queue, id, repeat, data) {
  const q = new Queue(queue, { connection });
  const job = await q.upsertJobScheduler(id, JSON.parse(repeat),
                                         { name: 'tick', data: JSON.parse(data ?? '{}') });
  await q.close();
  console.log(JSON.stringify({ id: job ? job.id : null }));
}

// Scheduler id as BullMQ reads it after some worker ran it: at least min
// iterations completed, each "repeat:<id>:<ms>" with the template's data
// and BullMQ's repeat fields (repeatJobKey, opts.repeat.count counting 1,
// 2, ...), at least gap ms apart (and on multiples of align, if given);
// and the scheduler still has its current iteration pending, so it keeps
// producing. Prints the count.
export async function schedCheck(queue, id, min, gap, data, align) {
  const q = new Queue(queue, { connection });
  const prefix = `repeat:${id}:`;
  const done = (await q.getJobs(['completed'], 0, -1, true)).filter(j => j.id.startsWith(prefix));
  check(done.length >= Number(min), `only ${done.length} iterations completed`, done.map(j => j.id));
  done.sort((a, b) => Number(a.id.slice(prefix.length)) - Number(b.id.slice(prefix.length)));
  let prev = null;
  for (const j of done) {
    const ms = Number(j.id.slice(prefix.length));
    check(j.repeatJobKey === id, 'repeatJobKey', { id: j.id, rjk: j.repeatJobKey });
    check(JSON.stringify(j.data) === JSON.stringify(JSON.parse(data)), 'data', j.data);
    check(j.opts.repeat && (j.opts.repeat.every || j.opts.prevMillis === ms),
          'opts.repeat / prevMillis', j.opts); // (BullMQ sets prevMillis for patterns only)
    check(!align || ms % Number(align) === 0, 'not aligned', ms);
    if (prev) {
      check(ms - prev.ms >= Number(gap), 'iterations too close', [prev.ms, ms]);
      check(j.opts.repeat.count === prev.count + 1, 'repeat.count', [prev.count, j.opts.repeat]);
    }
    prev = { ms, count: j.opts.repeat.count };
  }
  const s = await q.getJobScheduler(id);
  check(s && s.next, 'scheduler gone', s);
  const pending = await q.getJob(`${prefix}${s.next}`);
  check(pending, 'no pending iteration', s);
  const state = await pending.getState();
  check(['delayed', 'waiting', 'prioritized', 'active'].includes(state), 'pending state', state);
  check(s.iterationCount >= done.length, 'iterationCount', s);
  await q.close();
  console.log(JSON.stringify({ iterations: done.length, next: s.next, state, ic: s.iterationCount }));
}
