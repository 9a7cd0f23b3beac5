// promise-pool-overhead.mjs - the per-item cost of @supercharge/promise-pool
// 3.3.0: N items whose processor resolves at once, at concurrency C, so the
// time measured is the pool's own bookkeeping. The peer of the overhead
// figures of bench/bench_rails.c (ln_limiter and ln_map with work that takes
// no time).
//
//   node promise-pool-overhead.mjs [--items=1000000] [--concurrency=1000] [--repeats=3]
//
// One warm-up run on a tenth of the items, then `repeats` timed runs; only
// the `process` call is timed (performance.now()), the input array is built
// before. Prints one JSON line: every run in ms, the median, ns per item.
import { PromisePool } from '@supercharge/promise-pool';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v];
  }),
);
const items = Number(args.items ?? 1000000);
const concurrency = Number(args.concurrency ?? 1000);
const repeats = Number(args.repeats ?? 3);

const require = createRequire(import.meta.url);
const pkg = JSON.parse(
  readFileSync(require.resolve('@supercharge/promise-pool/package.json'), 'utf8'),
);

async function run(n) {
  const data = Array.from({ length: n }, (_, i) => i);
  const t0 = performance.now();
  const { results, errors } = await PromisePool.for(data)
    .withConcurrency(concurrency)
    .process(async (x) => x);
  const ms = performance.now() - t0;
  if (results.length !== n || errors.length !== 0) throw new Error('bad result');
  return ms;
}

await run(Math.max(1, Math.floor(items / 10)));
const runsMs = [];
for (let r = 0; r < repeats; r++) runsMs.push(await run(items));
const sorted = [...runsMs].sort((a, b) => a - b);
const mid = sorted.length >> 1;
const medianMs = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
console.log(
  JSON.stringify({
    tool: '@supercharge/promise-pool',
    version: pkg.version,
    node: process.version,
    items,
    concurrency,
    runsMs,
    medianMs,
    nsPerItem: (medianMs * 1e6) / items,
  }),
);
