// promise-pool.mjs - E2 `rails` peer: 1,000 sleeps at concurrency 50, as
// chunked Promise.all and through @supercharge/promise-pool 3.3.0.
//
//   node promise-pool.mjs <chunked|pool> --tasks=N --concurrency=C --scaleDiv=D --seed=S
//
// E2's method (docs/experiments.md#e2): the durations are
// getRandomTime(500, 2000) ms; here they come from the same generator as
// bench/workloads/rails_load.c (splitmix64 seeded with S,
// 500 + floor(u * 1501) ms, times 1/D, rounded to whole ms, at least 1), so
// lanes and this script sleep exactly the same plan. `chunked` awaits
// Promise.all over each chunk of C in turn; `pool` runs
// PromisePool.for(durations).withConcurrency(C).process(sleep). One untimed
// warm-up of both paths first; then only the scheduled work is timed. Prints
// one JSON line of figures.
import { performance } from 'node:perf_hooks';
import { PromisePool } from '@supercharge/promise-pool';

const [mode, ...rest] = process.argv.slice(2);
const option = (name) => {
  const arg = rest.find((a) => a.startsWith(`--${name}=`));
  if (!arg) throw new Error(`missing --${name}=`);
  return Number(arg.slice(name.length + 3));
};
const tasks = option('tasks');
const concurrency = option('concurrency');
const scale = 1 / option('scaleDiv');
const seed = option('seed');
if (!['chunked', 'pool'].includes(mode) || !(tasks >= 1) || !(concurrency >= 1) || !(scale > 0))
  throw new Error('usage: promise-pool.mjs <chunked|pool> --tasks=N --concurrency=C --scaleDiv=D --seed=S');

// splitmix64 (Steele, Lea, Flood 2014), as in bench/workloads/rails_load.c.
function plan(n, minMs, maxMs) {
  const mask = (1n << 64n) - 1n;
  let state = BigInt(seed) & mask;
  const span = maxMs - minMs + 1;
  const ms = new Array(n);
  for (let i = 0; i < n; i++) {
    state = (state + 0x9e3779b97f4a7c15n) & mask;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
    z ^= z >> 31n;
    const u = Number(z >> 11n) * 2 ** -53; // [0, 1)
    const scaled = (minMs + Math.trunc(u * span)) * scale + 0.5;
    ms[i] = scaled < 1 ? 1 : Math.trunc(scaled);
  }
  return ms;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(() => resolve(ms), ms));

async function chunked(durations) {
  for (let i = 0; i < durations.length; i += concurrency)
    await Promise.all(durations.slice(i, i + concurrency).map(sleep));
  return durations.length;
}

async function pool(durations) {
  const { results, errors } = await PromisePool.for(durations).withConcurrency(concurrency).process(sleep);
  if (errors.length) throw errors[0];
  return results.length;
}

const durations = plan(tasks, 500, 2000);
const run = mode === 'chunked' ? chunked : pool;
await chunked(durations.slice(0, concurrency).map(() => 1)); // warm-up
await pool(durations.slice(0, concurrency).map(() => 1));

const started = performance.now();
const done = await run(durations);
const ms = performance.now() - started;
if (done !== tasks) throw new Error(`unexpected result: ${done} of ${tasks} tasks`);
const sumMs = durations.reduce((a, b) => a + b, 0);
console.log(JSON.stringify({ ms, tasks: done, sumMs, maxMs: Math.max(...durations) }));
