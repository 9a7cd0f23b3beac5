// every_times.mjs - the reference for the `every_lua` case of
// tests/jobs/test_cron.c: BullMQ 6.7's own getJobSchedulerEveryNextMillis (the
// Lua include its addJobScheduler and updateJobScheduler scripts run),
// evaluated by the Redis at LANES_TEST_REDIS_URL over a grid of inputs.
//
// Each output line is  PREV EVERY NOW OFFSET START <TAB> NEXT OFFSET
// with PREV "-" for a new scheduler and 0 for no offset / no start date.
// Exit 77 (with a message) without LANES_TEST_REDIS_URL or the modules.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const url = process.env.LANES_TEST_REDIS_URL;
if (!url) {
  console.error('every_times.mjs: LANES_TEST_REDIS_URL is not set');
  process.exit(77);
}
let Redis, lua;
try {
  Redis = require('../interop/node_modules/ioredis');
  lua = readFileSync(new URL('../interop/node_modules/bullmq/dist/cjs/commands/includes/' +
    'getJobSchedulerEveryNextMillis.lua', import.meta.url), 'utf8');
} catch (e) {
  console.error(`every_times.mjs: bullmq or ioredis not found (${e.message})`);
  process.exit(77);
}

// ARGV holds the cases, five values each; an empty PREV or START is nil.
const script = `${lua}
local out = {}
for i = 1, #ARGV, 5 do
  local prev = ARGV[i] ~= '' and tonumber(ARGV[i]) or nil
  local start = ARGV[i + 4] ~= '' and ARGV[i + 4] or nil
  local n, o = getJobSchedulerEveryNextMillis(prev, tonumber(ARGV[i + 1]),
    tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), start)
  out[#out + 1] = n
  out[#out + 1] = o
end
return out`;

const cases = [];
const T = 1780000000123; // a 2026 instant, not on any round grid
for (const every of [1, 7, 1000, 60000, 3600000, 86400000])
  for (const prev of [null, T - every, T - 3 * every - 5, T - 1, T, T + 12345])
    for (const now of [T, T + 1, T + every, T + 10 * every + 3])
      for (const offset of [0, 1, Math.floor(every / 2), every - 1])
        for (const start of [0, T - 50000, now + 777])
          cases.push([prev, every, now, offset, start]);

const url2 = new URL(url);
const redis = new Redis({ host: url2.hostname, port: Number(url2.port || 6379),
  db: Number(url2.pathname.slice(1) || 0), lazyConnect: true });
await redis.connect();
const lines = [];
for (let i = 0; i < cases.length; i += 200) {
  const chunk = cases.slice(i, i + 200);
  const argv = chunk.flatMap(([p, e, n, o, s]) =>
    [p === null ? '' : String(p), String(e), String(n), String(o), s ? String(s) : '']);
  const res = await redis.eval(script, 0, ...argv);
  chunk.forEach(([p, e, n, o, s], k) => {
    lines.push(`${p === null ? '-' : p} ${e} ${n} ${o} ${s}\t${res[2 * k]} ${res[2 * k + 1]}`);
  });
}
await redis.quit();
process.stdout.write(lines.join('\n') + '\n');
