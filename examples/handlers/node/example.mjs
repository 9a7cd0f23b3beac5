#!/usr/bin/env node
// An example handler: sums data.numbers, reporting progress and a log line.
//   lanes worker sqlite:lanes.db sums --concurrency 4 \
//       --exec-persistent node examples/handlers/node/example.mjs
import { run, Unrecoverable } from './lanes_handler.mjs';

run(async (job) => {
  const numbers = job.data?.numbers;
  if (!Array.isArray(numbers)) throw new Unrecoverable('data has no array "numbers"');
  job.log(`summing ${numbers.length} numbers`);
  job.progress(50);
  return { sum: numbers.reduce((a, b) => a + b, 0) };
});
