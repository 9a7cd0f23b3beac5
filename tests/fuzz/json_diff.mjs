// json_diff.mjs - lanes takes exactly the JSON texts JSON.parse takes, byte
// for byte: every file of the given corpus directories (tests/fuzz/corpus/
// json and what the json fuzzer found) and the edge cases below go to both
// ln_jobs_json_valid (through json_verdict) and JSON.parse (after a strict
// UTF-8 decoding that keeps a BOM, as the bytes are); any disagreement
// fails. The one documented difference: nesting deeper than lanes' bound
// (jobs.h; 1000 levels always taken) may be refused, never crash.
//   node json_diff.mjs JSON_VERDICT DIR...
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [verdict, ...dirs] = process.argv.slice(2);
const cases = []; // [name, path]
const tmp = mkdtempSync(join(tmpdir(), 'lanes-json-diff-'));
const nest = (n) => '['.repeat(n) + ']'.repeat(n);
const edge = {
  bignum: '123456789012345678901234567890123456789',
  hugeexp: '1e99999',
  negzero: '-0',
  tiny: '4.9e-325',
  fracexp: '[0.5E+2,1e-0,-1.0e00]',
  leading0: '01',
  plus: '+1',
  dotfirst: '.5',
  dotlast: '5.',
  hex: '0x10',
  nan: 'NaN',
  inf: 'Infinity',
  lone_hi: '"\\ud800"',
  lone_lo: '"\\udc00x"',
  pair: '"\\ud83d\\ude00"',
  bad_escape: '"\\x41"',
  upper_u: '"\\U0041"',
  short_u: '"\\u12"',
  nul_escape: '"a\\u0000b"',
  raw_tab: '"a\tb"',
  raw_del: '"a\x7fb"',
  dup_keys: '{"a":1,"a":{"a":[]}}',
  empty_key: '{"":0}',
  trailing_comma: '[1,]',
  trailing_obj: '{"a":1,}',
  single_quote: "'a'",
  comment: '[1/*c*/]',
  ws_ok: ' \t\r\n{ "a" :\n[ 1 , 2 ]\t}\r\n ',
  ws_vt: '\v1',
  ws_ff: '\f1',
  ws_nbsp: '\u00a01',
  ws_ls: '1\u2028',
  ws_ideo: '\u30001',
  empty: '',
  only_ws: '  ',
  two_values: '1 2',
  top_string: '"x"',
  top_true: 'true',
  truex: 'tru',
  nullx: 'nul',
  nest1000: nest(1000),
  objnest: '{"a":'.repeat(500) + '1' + '}'.repeat(500),
  unclosed: nest(10).slice(0, -1),
  utf8: '"h\u00e9llo \u20ac \ud83d\ude00"',
};
for (const [name, text] of Object.entries(edge)) {
  const p = join(tmp, name);
  writeFileSync(p, text);
  cases.push([name, p]);
}
const raw = {
  bom: Buffer.from([0xef, 0xbb, 0xbf, 0x31]),
  bom_ws: Buffer.from([0x20, 0xef, 0xbb, 0xbf, 0x31]),
  raw_surrogate: Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]),
  overlong: Buffer.from([0x22, 0xc0, 0xaf, 0x22]),
  bad_byte: Buffer.from([0x22, 0xff, 0x22]),
  truncated: Buffer.from([0x22, 0xe2, 0x82, 0x22]),
  nul_after: Buffer.from([0x31, 0x00]),
  nul_in_string: Buffer.from([0x22, 0x00, 0x22]),
  beyond_max: Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]),
};
for (const [name, bytes] of Object.entries(raw)) {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  cases.push([name, p]);
}
// Random texts from a fixed seed: values of the JSON grammar, half of them
// then damaged by a few byte edits (the bytes JSON's edge lives on).
let seed = 0x1a2b3c4d;
const rnd = (n) => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (((t ^ (t >>> 14)) >>> 0) % n);
};
const pick = (a) => a[rnd(a.length)];
const atoms = ['0', '-0', '1', '-12', '3.25', '1e5', '2E-3', '1e400', '123456789012345678901234',
  'true', 'false', 'null', '""', '"a"', '"\\u00e9"', '"\\ud800"', '"\\ud83d\\ude00"', '"\\n\\t\\/"',
  '"\u00e9\u20ac"', '"\\u0000"'];
const wsp = ['', '', ' ', '\n', '\t', '\r\n'];
function value(depth) {
  const k = depth > 4 ? 0 : rnd(4);
  if (k === 0 || k === 1) return pick(atoms);
  const n = rnd(4), w = () => pick(wsp);
  const items = [];
  for (let i = 0; i < n; i++)
    items.push(k === 2 ? w() + value(depth + 1) + w() : `${w()}"k${rnd(3)}"${w()}:${w()}${value(depth + 1)}`);
  return k === 2 ? `[${items.join(',')}]` : `{${items.join(',')}}`;
}
const junk = [0x00, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x22, 0x2b, 0x2c, 0x2d, 0x2e, 0x30, 0x31,
  0x3a, 0x45, 0x5b, 0x5c, 0x5d, 0x65, 0x75, 0x7b, 0x7d, 0x7f, 0x80, 0xa0, 0xbf, 0xc0, 0xc2, 0xe2,
  0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
for (let i = 0; i < 3000; i++) {
  let b = Buffer.from(pick(wsp) + value(0) + pick(wsp));
  if (rnd(2)) {
    for (let e = 1 + rnd(3); e > 0; e--) {
      const at = rnd(b.length + 1), op = rnd(3);
      const ins = Buffer.from([pick(junk)]);
      if (op === 0) b = Buffer.concat([b.subarray(0, at), ins, b.subarray(at)]);
      else if (op === 1 && b.length) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
      else if (b.length) b = Buffer.concat([b.subarray(0, at), ins, b.subarray(at + 1)]);
    }
  }
  const p = join(tmp, `gen${i}`);
  writeFileSync(p, b);
  cases.push([`gen${i} (${JSON.stringify(b.toString('latin1')).slice(0, 80)})`, p]);
}
const deep = join(tmp, 'nest100000');
writeFileSync(deep, nest(100000));
for (const dir of dirs) {
  let names = [];
  try { names = readdirSync(dir); } catch { continue; } // no finds yet
  for (const n of names) {
    const p = join(dir, n);
    if (statSync(p).isFile()) cases.push([`${dir}/${n}`, p]);
  }
}

function nodeTakes(bytes) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return false; // not UTF-8: no JSON text
  }
  try { JSON.parse(text); return true; } catch { return false; }
}

function verdicts(paths) {
  const out = [];
  for (let i = 0; i < paths.length; i += 200) {
    const chunk = paths.slice(i, i + 200);
    const text = execFileSync(verdict, chunk, { encoding: 'utf8', maxBuffer: 1 << 24 });
    out.push(...text.trim().split('\n').filter((l) => l !== '').map((l) => l === '1'));
  }
  return out;
}

const lanes = verdicts(cases.map(([, p]) => p));
let bad = 0;
cases.forEach(([name, p], i) => {
  const node = nodeTakes(readFileSync(p));
  if (node !== lanes[i]) {
    bad++;
    console.log(`DIFFER ${name}: JSON.parse ${node ? 'takes' : 'refuses'} it, lanes ${lanes[i] ? 'takes' : 'refuses'} it`);
  }
});
const [deepVerdict] = verdicts([deep]); // must come back (no crash); either answer
console.log(`nest100000: JSON.parse ${nodeTakes(readFileSync(deep)) ? 'takes' : 'refuses'}, lanes ${deepVerdict ? 'takes' : 'refuses'} (lanes bounds nesting)`);
rmSync(tmp, { recursive: true, force: true });
console.log(`${cases.length} texts (${lanes.filter((v) => v).length} taken), ${bad} disagreements`);
process.exit(bad === 0 ? 0 : 1);
