// libuv.cjs - E4 `starvation` peer: Node.js's own libuv thread pool.
//
//   UV_THREADPOOL_SIZE=<n> node libuv.cjs <hashes> <file> --iterations=N
//
// E4 (docs/experiments.md#e4): crypto.pbkdf2('a', 'b', N, 512, 'sha512')
// hashes and one fs.readFile share libuv's single pool. First the read alone
// (after one untimed warm-up read), then <hashes> hashes and, right after
// them, the read again. Times are from the moment the work is issued to its
// callback on the main thread. Prints one JSON line of figures.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const { performance } = require('node:perf_hooks');

const [hashesArg, file, ...rest] = process.argv.slice(2);
const option = (name) => {
  const arg = rest.find((a) => a.startsWith(`--${name}=`));
  if (!arg) throw new Error(`missing --${name}=`);
  return Number(arg.slice(name.length + 3));
};
const hashes = Number(hashesArg);
const iterations = option('iterations');
if (!(hashes >= 1) || !file || !(iterations >= 1))
  throw new Error('usage: libuv.cjs <hashes> <file> --iterations=N');

const readOnce = () =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    fs.readFile(file, (err, data) => (err ? reject(err) : resolve({ ms: performance.now() - t0, bytes: data.length })));
  });

const hashOnce = (t0) =>
  new Promise((resolve, reject) => {
    crypto.pbkdf2('a', 'b', iterations, 512, 'sha512', (err) => (err ? reject(err) : resolve(performance.now() - t0)));
  });

async function main() {
  await readOnce(); // warm-up: page cache and the pool's threads
  const alone = await readOnce();
  const t0 = performance.now();
  const hashDone = Array.from({ length: hashes }, () => hashOnce(t0));
  const loaded = await readOnce();
  const hashMs = await Promise.all(hashDone);
  console.log(JSON.stringify({
    readAloneMs: alone.ms,
    readLoadedMs: loaded.ms,
    hashFirstMs: Math.min(...hashMs),
    hashLastMs: Math.max(...hashMs),
    bytes: loaded.bytes,
    threads: Number(process.env.UV_THREADPOOL_SIZE || 4),
  }));
}
main().catch((err) => { console.error(err); process.exit(1); });
