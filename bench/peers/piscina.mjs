// piscina.mjs - E1 `fixedqueue` peer: Piscina 5.3.2 drains N queued tasks.
//
//   node piscina.mjs <fixed|default|array> <threads> --tasks=N
//
// The method of the claim E1 re-tests (docs/experiments.md): create the pool, run one warm-up task,
// then time submitting N tasks of `value + 1` and awaiting every result;
// pool creation and worker start stay outside the timed span. Checks the
// result count and the last value. Prints one JSON line of figures.
//
// Queue variants: `fixed` passes `new FixedQueue()`, `default` passes no
// taskQueue (which in Piscina 5 *is* a FixedQueue), `array` passes
// `new ArrayTaskQueue()` (Piscina 4's default, the README's comparison).
import { performance } from 'node:perf_hooks';
import { Piscina, FixedQueue, ArrayTaskQueue } from 'piscina';

const [variant, threadsArg, ...rest] = process.argv.slice(2);
const option = (name) => {
  const arg = rest.find((a) => a.startsWith(`--${name}=`));
  if (!arg) throw new Error(`missing --${name}=`);
  return Number(arg.slice(name.length + 3));
};
const queues = { fixed: () => new FixedQueue(), default: () => undefined, array: () => new ArrayTaskQueue() };
const threads = Number(threadsArg);
const taskCount = option('tasks');
if (!(variant in queues) || !(threads >= 1) || !(taskCount >= 1))
  throw new Error('usage: piscina.mjs <fixed|default|array> <threads> --tasks=N');

const taskQueue = queues[variant]();
const pool = new Piscina({
  filename: new URL('./piscina-worker.mjs', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  ...(taskQueue ? { taskQueue } : {}),
});
await pool.run(0); // warm-up: the worker is started and has run once

const started = performance.now();
const tasks = new Array(taskCount);
for (let i = 0; i < taskCount; i++) tasks[i] = pool.run(i);
const results = await Promise.all(tasks);
const ms = performance.now() - started;

if (results.length !== taskCount || results[taskCount - 1] !== taskCount)
  throw new Error(`unexpected result: ${results.length} results, last ${results[taskCount - 1]}`);
const waitP50Ms = pool.histogram.waitTime.p50;
await pool.destroy();
console.log(JSON.stringify({ ms, tasks: results.length, last: results[taskCount - 1], waitP50Ms }));
