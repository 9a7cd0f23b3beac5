// audit_lib.mjs - what the audit scenarios (tests/interop/audit_*.mjs,
// driven by tests/interop/test_audit_*.sh) share: the Redis connection, checks with
// a clear message, a bounded wait, and C workers (`lanes worker --exec`)
// started as child processes beside Node Workers on the same queues.
//
// Every scenario runs its Node and C workers at the same time, reads the
// result back the way a Node team would (Queue/Job/QueueEvents), prints one
// JSON line and exits 0; a failed check prints "audit: <why>" and exits 1;
// a check that finds a known, reported bug exits AUDIT_KNOWN_BUG (registered
// as WILL_FAIL in tests/audit.cmake, so it turns red once the bug is fixed).
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

export const AUDIT_KNOWN_BUG = 42;

const url = new URL(process.env.LANES_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0');
export const redisUrl = url.href;
export const connection = {
  host: url.hostname,
  port: Number(url.port || 6379),
  db: Number(url.pathname.slice(1) || 0),
  maxRetriesPerRequest: null,
};

export const lanesCli = process.env.AUDIT_LANES;
const children = new Set();

export function fail(msg, extra) {
  console.error(`audit: ${msg}${extra === undefined ? '' : ' ' + JSON.stringify(extra)}`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(1);
}

export function check(cond, msg, extra) {
  if (!cond) fail(msg, extra);
}

// A check that fails because of a bug already reported: exit
// AUDIT_KNOWN_BUG with the reason, after the scenario's other checks.
export function knownBug(msg, extra) {
  console.error(`audit: KNOWN BUG: ${msg}${extra === undefined ? '' : ' ' + JSON.stringify(extra)}`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(AUDIT_KNOWN_BUG);
}

export const sleep = ms => new Promise(r => setTimeout(r, ms));

// Until pred() is truthy (polled every 50 ms) or ms have passed: fail.
export async function until(pred, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > end) fail(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

// The handler both kinds of worker run, by job name: "doomed*" always
// fails ("doomed"), "flaky*" fails its first attempt, every job sleeps
// AUDIT_SLEEP_MS (the worker's), and the result is {by, name}. Each run
// appends "<by> <queue> <id>" to LOG.
export function nodeHandler(log, sleepMs) {
  return async job => {
    if (log) appendFileSync(log, `node ${job.queueName} ${job.id}\n`);
    if (sleepMs) await sleep(sleepMs);
    if (job.name.startsWith('doomed')) throw new Error('doomed');
    if (job.name.startsWith('flaky') && job.attemptsMade < 1) throw new Error('flaky');
    return { by: 'node', name: job.name };
  };
}

const execScript = `
[ -n "$AUDIT_LOG" ] && echo "c $LANES_JOB_QUEUE $LANES_JOB_ID" >>"$AUDIT_LOG"
cat >/dev/null
[ "\${AUDIT_SLEEP_MS:-0}" -gt 0 ] && sleep "$(awk "BEGIN{print $AUDIT_SLEEP_MS/1000}")"
case "$LANES_JOB_NAME" in
doomed*) echo doomed >&2; exit 1 ;;
flaky*) [ "$LANES_JOB_ATTEMPT" -le 1 ] && { echo flaky >&2; exit 1; } ;;
esac
printf '{"by":"c","name":"%s"}' "$LANES_JOB_NAME"
`;

// Start `lanes worker URL QUEUE --exec sh -c SCRIPT` with extra options;
// returns the child process (stderr collected in .err). kill() it to stop.
export function cWorker(queue, { log, sleepMs = 0, args = [] } = {}) {
  check(lanesCli, 'AUDIT_LANES (the lanes CLI) not set');
  const p = spawn(lanesCli, ['worker', redisUrl, queue, ...args, '--exec', 'sh', '-c', execScript], {
    env: { ...process.env, AUDIT_LOG: log ?? '', AUDIT_SLEEP_MS: String(sleepMs) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  p.err = '';
  p.stderr.on('data', d => { p.err += d; });
  children.add(p);
  p.on('exit', () => children.delete(p));
  return p;
}

// Stop a C worker (SIGTERM, then SIGKILL after ms) and wait for its exit.
export function stopC(p, ms = 5000) {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise(resolve => {
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    p.on('exit', () => { clearTimeout(t); resolve(); });
    p.kill('SIGTERM');
  });
}

// The most intervals [start, end) that overlap at one instant.
export function maxOverlap(intervals) {
  const ev = [];
  for (const [s, e] of intervals) { ev.push([s, 1]); ev.push([e, -1]); }
  ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]); // an end before a start at one ms
  let cur = 0, best = 0;
  for (const [, d] of ev) { cur += d; best = Math.max(best, cur); }
  return best;
}

// The most start times within one window of BullMQ's limiter: a fixed
// window of `ms` opened by the first job taken after the last one closed
// (the limiter key's INCR and PEXPIRE), so a sliding window may hold up to
// twice the limit. processedOn is the worker's clock, a few ms off the
// limiter key's, so where a window ends is known only to within `slack`
// ms: of every way to cut the sorted starts into windows that the clocks
// allow (a window opened at start a holds the starts before a + ms +
// slack, and the next opens at one at or after a + ms - slack), this is
// the least "most starts in one window". A greedy cut misplaces windows: a
// start 17 ms after a window's end, kept in it as within the slack, moved
// every later window and counted 5 in one that the limiter kept at 4.
export function maxInFixedWindow(starts, ms, max, slack = 30) {
  const s = [...starts].sort((a, b) => a - b);
  const n = s.length;
  const best = new Array(n + 1).fill(Infinity); // best[k]: starts k.. cut alone
  best[n] = 0;
  for (let k = n - 1; k >= 0; k--) {
    for (let j = k + 1; j <= n && s[j - 1] < s[k] + ms + slack; j++) {
      if (j < n && s[j] < s[k] + ms - slack) continue; // the window is still open at s[j]
      best[k] = Math.min(best[k], Math.max(j - k, best[j]));
    }
  }
  return best[0] === Infinity ? max + 1 : best[0];
}

// The most start times within any window of `ms` (a sliding limiter check).
export function maxInWindow(starts, ms) {
  const s = [...starts].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[i] - s[j] >= ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}
