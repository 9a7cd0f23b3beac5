// next_times.mjs - the reference for tests/jobs/test_cron.c: next fire times of
// cron patterns as BullMQ 6.7 computes them with its cron-parser (and
// luxon), from tests/interop/node_modules.
//
// Each output line is  ZONE <TAB> START_MS <TAB> PATTERN <TAB> RESULT
// where RESULT is "ERR" (cron-parser refuses the pattern) or up to 5 times
// in ms, each computed from the one before by a FRESH parse with
// currentDate = that time (as BullMQ's repeat strategy does for every
// iteration), then "NONE" if cron-parser found no next time.
// Exit 77 (with a message) when the module is missing.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let CronExpressionParser, DateTime;
try {
  ({ CronExpressionParser } = require('../interop/node_modules/cron-parser'));
  ({ DateTime } = require('../interop/node_modules/luxon'));
} catch (e) {
  console.error(`next_times.mjs: cron-parser not found (${e.message})`);
  process.exit(77);
}

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe',
  'Asia/Kolkata', 'America/Sao_Paulo'];

export const PATTERNS = [
  '* * * * *', '0 * * * *', '30 * * * *', '*/15 * * * *', '0,30 * * * *',
  '0 2 * * *', '30 2 * * *', '0 3 * * *', '0 1 * * *', '45 1 * * *',
  '15 2 * * *', '0 1,2,3 * * *', '15 0-4 * * *', '0 */2 * * *',
  '0 0 * * *', '0 0 1 * *', '0 0 L * *', '0 12 * * 1L', '0 9 * * MON-FRI',
  '0 9 * * 1#1', '0 0 29 2 *', '0 0 13 * 5', '0 0 1,15 * SUN',
  '*/20 * * * * *', '0 30 2 * * *', '45 59 1 * * *', '0 0 9 * JAN,jul *',
  '0 0 12 ? * SAT', '0 0 0 * * 7', '5-10/2 3 * * *', '0 22-23,0-3 * * *',
  '0 0 31 * *', '@daily', '@hourly', '@weekly', '0 30 * * * *',
  '0 0 * * 5-7', '0 0 * * 1,3L', '0 0 1-3L * *', '0 0 * * *#2',
  '59 23 * * *', '0 0 2 * * *', '30 1 * * 0',
  // refused by cron-parser
  '60 * * * *', '* * * * * * *', '0 0 30 2 *', '0 0 * * 8', '0 0 * FOO *',
  '0 0 * * L', '0 0 * * 1#6', '1,1 * * * *', '0 0 * * 0,7', '5-1 * * * *',
  '*/0 * * * *', '0 0 * * 1#2,3', '1, * * * *', '0 0 32 * *',
  '0 0 * 13 *', '0 24 * * *',
];

// Random patterns (a fixed seed, so the output is stable): values, ranges,
// steps, lists, names, L and # -- in range or a little outside.
function randomPatterns(n) {
  let seed = 12345;
  const rnd = (k) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % k;
  };
  const MONTHS = ['JAN', 'feb', 'Mar', 'JUL', 'DEC', 'FOO'];
  const DAYS = ['SUN', 'mon', 'Fri', 'SAT', 'THU'];
  const atom = (lo, hi, f) => {
    const v = () => (rnd(40) === 0 ? hi + 1 : lo + rnd(hi - lo + 1));
    switch (rnd(f === 'dom' || f === 'dow' ? 9 : 7)) {
      case 0: return '*';
      case 1: return String(v());
      case 2: { const a = v(); return `${a}-${a + rnd(Math.max(1, hi - a + 1))}`; }
      case 3: return `*/${1 + rnd(hi - lo)}`;
      case 4: { const a = v(); return `${a}-${a + rnd(Math.max(1, hi - a + 1))}/${1 + rnd(9)}`; }
      case 5: return `${v()}/${rnd(24) ? 1 + rnd(12) : 0}`;
      case 6: return f === 'month' ? MONTHS[rnd(6)] : f === 'dow' ? DAYS[rnd(5)] : String(v());
      case 7: return f === 'dom' ? (rnd(2) ? 'L' : `${v()}L`) : `${rnd(8)}L`;
      default: return f === 'dow' && rnd(2) ? `${rnd(8)}#${1 + rnd(5)}` : '?';
    }
  };
  const field = (lo, hi, f) => {
    const k = rnd(5) === 0 ? 2 : 1;
    return Array.from({ length: k }, () => atom(lo, hi, f)).join(',');
  };
  const out = [];
  for (let i = 0; i < n; i++) {
    const f = [field(0, 59, 's'), field(0, 59, 'm'), field(0, 23, 'h'),
      field(1, 31, 'dom'), field(1, 12, 'month'), field(0, 7, 'dow')];
    const count = [4, 5, 5, 5, 5, 6, 6, 6, 6, 7][rnd(10)];
    out.push(f.slice(Math.max(0, 6 - count)).join(' ') + (count === 7 ? ' *' : ''));
  }
  return out;
}

const HOUR = 3600000;

// The instants at which zone's offset changes in 2026 and 2027.
function transitions(zone) {
  const out = [];
  let t = Date.UTC(2026, 0, 1);
  const end = Date.UTC(2028, 0, 1);
  let off = DateTime.fromMillis(t, { zone }).offset;
  for (; t < end; t += 15 * 60000) {
    const o = DateTime.fromMillis(t, { zone }).offset;
    if (o !== off) out.push(t);
    off = o;
  }
  return out;
}

function starts(zone) {
  const s = [Date.UTC(2026, 0, 1), Date.UTC(2026, 1, 28, 23, 59, 59, 500),
    Date.UTC(2026, 5, 15, 12, 34, 56, 789)];
  for (const t of transitions(zone)) {
    for (const d of [-1.5 * HOUR, -1, 0, HOUR])
      s.push(t + d);
  }
  return s;
}

function nextOf(pattern, zone, after) {
  const it = CronExpressionParser.parse(pattern, { currentDate: new Date(after), tz: zone });
  try {
    return it.next().getTime();
  } catch {
    return null;
  }
}

function row(zone, start, pattern) {
  let result;
  try {
    CronExpressionParser.parse(pattern, { tz: zone });
    const times = [];
    let t = start;
    for (let i = 0; i < 5; i++) {
      t = nextOf(pattern, zone, t);
      if (t === null) {
        times.push('NONE');
        break;
      }
      times.push(String(t));
    }
    result = times.join(' ');
  } catch {
    result = 'ERR';
  }
  return `${zone}\t${start}\t${pattern}\t${result}`;
}

const lines = [];
for (const zone of ZONES) {
  for (const start of starts(zone)) {
    for (const pattern of PATTERNS) lines.push(row(zone, start, pattern));
  }
}
// Random patterns, from one start each, in a zone with DST and one without.
for (const zone of ['UTC', 'Europe/Berlin']) {
  for (const pattern of randomPatterns(600)) {
    lines.push(row(zone, Date.UTC(2026, 2, 28, 22, 59, 30, 250), pattern));
  }
}
process.stdout.write(lines.join('\n') + '\n');
