// lanes_handler.mjs - write a `lanes worker --exec-persistent` handler in Node.
//
//   import { run } from './lanes_handler.mjs';
//   run(async (job) => {
//     job.progress(50);
//     job.log(`working on ${job.id}`);
//     return { sum: job.data.numbers.reduce((a, b) => a + b, 0) };
//   });
//
// The worker keeps this process running and sends it one job at a time as a
// JSON line on stdin; run() calls the handler (sync or async) for each and
// answers on stdout (the protocol: docs/persistent.md). What it returns is
// the job's result (JSON.stringify); new Raw(text) returns JSON text as it
// is, byte for byte. A throw fails the job with its message (retried while
// attempts remain); a thrown Unrecoverable fails it for good. console.log
// goes to stderr, so it never corrupts the protocol.
import { createInterface } from 'node:readline';
import { writeSync } from 'node:fs';

export class Raw {
  constructor(text) {
    this.text = String(text);
  }
}

export class Unrecoverable extends Error {}

// The protocol is written with writeSync on fd 1; console.log is pointed at
// stderr so a stray log line never lands in it.
function send(line) {
  const buf = Buffer.from(line + '\n', 'utf8');
  for (let off = 0; off < buf.length; ) {
    try {
      off += writeSync(1, buf, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}
const out = (obj) => send(JSON.stringify(obj));

// The job line's "data" member as sent: lanes writes it last, as the job's
// data text, after metadata whose strings escape every '"', so the first
// ',"data":' starts it and the line's final '}' ends it.
function dataText(line) {
  const at = line.indexOf(',"data":');
  const end = line.trimEnd().lastIndexOf('}');
  return at < 0 || end < at ? null : line.slice(at + 8, end);
}

export class Job {
  constructor(msg, text) {
    this.id = msg.id;
    this.name = msg.name;
    this.queue = msg.queue;
    this.attempt = msg.attempt;
    this.traceparent = msg.traceparent;
    this.data = msg.data;
    this.dataText = text;
  }
  progress(value) {
    out({ type: 'progress', progress: value });
  }
  log(line) {
    out({ type: 'log', line: String(line) });
  }
}

async function one(handle, line) {
  const msg = JSON.parse(line);
  if (msg.type !== 'job') return; // a line this version does not know
  const job = new Job(msg, dataText(line));
  let result;
  try {
    result = await handle(job);
  } catch (e) {
    const message =
      e instanceof Unrecoverable ? e.message : e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    if (e instanceof Unrecoverable) out({ type: 'error', message, unrecoverable: true });
    else out({ type: 'error', message });
    return;
  }
  let text = result instanceof Raw ? result.text : JSON.stringify(result ?? null);
  if (text === undefined || /[\r\n]/.test(text)) {
    out({ type: 'error', message: 'the result is not one line of JSON' });
    return;
  }
  send('{"type":"result","result":' + text + '}');
}

export function run(handle) {
  console.log = console.error;
  console.info = console.error;
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let chain = Promise.resolve(); // one job at a time, in order
  rl.on('line', (line) => {
    if (line.trim() === '') return;
    chain = chain
      .then(() => one(handle, line))
      .catch((e) => {
        // not a job line we can read: exit, lanes restarts the handler
        console.error('lanes_handler:', e);
        process.exit(70);
      });
  });
}
