// node/board.mjs - the BullMQ side of lanes' interop tests: Bull Board's HTTP
// API over the queues lanes writes. Imported by tests/interop/interop.mjs (the
// command dispatch).
import { Queue } from 'bullmq';
import { connection, check } from './common.mjs';

// Bull Board (@bull-board/api + express) on a loopback port: its HTTP API
// must list the queue with the jobs and data lanes wrote.
async function startBoard(queue) {
  const express = (await import('express')).default;
  const { createBullBoard } = await import('@bull-board/api');
  const { BullMQAdapter } = await import('@bull-board/api/bullMQAdapter');
  const { ExpressAdapter } = await import('@bull-board/express');
  const q = new Queue(queue, { connection });
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath('/ui');
  createBullBoard({ queues: [new BullMQAdapter(q)], serverAdapter });
  const app = express();
  app.use('/ui', serverAdapter.getRouter());
  const server = await new Promise(r => { const s = app.listen(0, '127.0.0.1', () => r(s)); });
  const base = `http://127.0.0.1:${server.address().port}/ui`;
  return { server, base, q };
}

export async function board(queue, expectJobs) {
  const { server, base, q } = await startBoard(queue);
  try {
    const res = await fetch(`${base}/api/queues?activeQueue=${queue}&status=latest&page=1&jobsPerPage=50`);
    check(res.ok, `GET /api/queues: HTTP ${res.status}`);
    const body = await res.json();
    const entry = body.queues.find(x => x.name === queue);
    check(entry, 'queue not listed', body.queues.map(x => x.name));
    const total = Object.values(entry.counts).reduce((s, n) => s + n, 0);
    check(total === Number(expectJobs), 'job counts', entry.counts);
    check(entry.jobs.length === Number(expectJobs), 'jobs listed', entry.jobs.length);
    const plain = entry.jobs.find(j => j.id === '1');
    check(plain && plain.name === 'plain' && plain.data.s === 'héllo', 'job 1 data', plain);
    const one = await (await fetch(`${base}/api/queues/${queue}/cust-1`)).json();
    check(one.job && one.job.data.c === 1 && one.job.opts.jobId === 'cust-1', 'job cust-1', one);
    console.log(JSON.stringify({ listed: entry.jobs.length, counts: entry.counts }));
  } finally {
    server.close();
    await q.close();
  }
}

// Bull Board's workers panel for a queue a C worker is running on.
export async function boardWorkers(queue) {
  const { server, base, q } = await startBoard(queue);
  try {
    const res = await fetch(`${base}/api/queues/${queue}/workers`);
    check(res.ok, `GET workers: HTTP ${res.status}`);
    const { workers } = await res.json();
    check(Array.isArray(workers) && workers.some(w => /^lanes-/.test(w.name ?? '')),
      'no lanes worker listed', workers);
    console.log(JSON.stringify({ workers: workers.map(w => w.name) }));
  } finally {
    server.close();
    await q.close();
  }
}
