// dash.test.mjs - `lanes dash` in a real browser (tests/dash.cmake):
// Debian's chromium driven by playwright-core, against one store.
//
//   node dash.test.mjs sqlite|redis LANES_BIN OUTDIR
//
// sqlite: a fresh file in a temporary directory; redis:
// $LANES_TEST_REDIS_URL with a key prefix of this run (exit 77 = skipped
// when it is unset, or when chromium is not installed). It fills the store
// with `lanes jobs` / `lanes worker`, then checks in the page that the
// queue list shows the counts, that a job's page shows its data, that
// retry, promote and remove work and the store changes accordingly (read
// back with `lanes jobs`), that a write without the token is refused, and
// that --read-only refuses writes, that a queue's workers panel shows
// a running `lanes worker` and drops it once stopped, and that a queue
// page's throughput chart draws the per-minute metrics of a worker run
// with --metrics-points, that a flow parent is listed under
// waiting-children and its page draws its children and tree (states
// updated once a worker ran them, links between parent and child), and
// that a scheduler shows its schedule and next run and is removed by its
// button, that a flow parent is removed with its children by its button,
// that a job waiting for the children its run added is marked so, and
// that a custom backoff type and its jitter show, and that a job's data
// and priority are edited through its page. The queue page's
// screenshot goes to OUTDIR/dash-STORE.png, the
// chart's to OUTDIR/dash-chart-STORE.png, the flow's to
// OUTDIR/dash-flow-STORE.png.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [store, lanesBin, outDir] = process.argv.slice(2);
const CHROMIUM = '/usr/bin/chromium';
const SKIP = 77;
const TOKEN = 's3cret-' + process.pid;

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exitCode = 1;
  throw new Error(msg);
}
function check(cond, msg) {
  if (!cond) fail(msg);
  console.log('ok   ' + msg);
}

// The whole test is bounded: a hang fails it instead of CTest's timeout.
const watchdog = setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 100000);

if (!existsSync(CHROMIUM)) {
  console.error('skipped [chromium]: ' + CHROMIUM + ' not found (Debian: apt-get install chromium)');
  process.exit(SKIP);
}
let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  console.error('skipped [node]: playwright-core not installed (npm ci in tests/dash)');
  process.exit(SKIP);
}

const tmp = mkdtempSync(join(tmpdir(), 'lanes-dash-'));
let url;
let redisPrefix = null;
if (store === 'sqlite') {
  url = 'sqlite:' + join(tmp, 'dash.db');
} else {
  const base = process.env.LANES_TEST_REDIS_URL;
  if (!base) {
    console.error('skipped [redis]: LANES_TEST_REDIS_URL not set');
    process.exit(SKIP);
  }
  redisPrefix = 'ldash' + process.pid + Date.now().toString(36);
  url = base + (base.includes('?') ? '&' : '?') + 'prefix=' + redisPrefix;
}

function lanes(...args) {
  const r = spawnSync(lanesBin, args, { encoding: 'utf8', timeout: 30000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
function counts(queue) {
  const r = lanes('jobs', url, 'counts', queue, '--json');
  if (r.code !== 0) fail('counts ' + queue + ': ' + r.err);
  return JSON.parse(r.out);
}
function add(queue, name, data, ...opts) {
  const r = lanes('jobs', url, 'add', queue, name, data, ...opts);
  if (r.code !== 0) fail('add: ' + r.err);
}

// Start `lanes dash` on a free port; resolves to its base URL.
function startDash(...opts) {
  const child = spawn(lanesBin, ['dash', url, '--listen', '127.0.0.1:0', ...opts],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('lanes dash did not start: ' + err)), 10000);
    child.stderr.on('data', (b) => {
      err += b;
      const m = /on (http:\/\/127\.0\.0\.1:\d+)\//.exec(err);
      if (m) { clearTimeout(t); resolve({ child, base: m[1] }); }
    });
    child.on('exit', (code) => reject(new Error('lanes dash exited ' + code + ': ' + err)));
  });
}
function stopDash(d) {
  return new Promise((resolve) => {
    if (d.child.exitCode !== null) return resolve(d.child.exitCode);
    d.child.on('exit', (code) => resolve(code));
    d.child.kill('SIGTERM');
  });
}

// POST from inside the page, as the page's own script would.
function post(page, path, headers) {
  return page.evaluate(async ([p, h]) => {
    const r = await fetch(p, { method: 'POST', headers: h });
    return { status: r.status, body: await r.json() };
  }, [path, headers]);
}

// Off loopback without a token the dashboard refuses to start.
function refusesOpenListen() {
  const r = spawnSync(lanesBin, ['dash', url, '--listen', '0.0.0.0:0'],
    { encoding: 'utf8', timeout: 10000 });
  check(r.status === 3 && r.stderr.includes('--token-file'),
    'a non-loopback --listen without --token-file is refused');
}

function fill() {
  add('mail', 'send', '{"to":"ada@example.com","html":"<img src=x onerror=alert(1)>"}',
    '--id', 'mail-1');
  add('mail', 'send', '{"to":"bob@example.com"}', '--id', 'mail-2');
  add('mail', 'send', '{"to":"later@example.com"}', '--id', 'mail-3', '--delay', '3600000');
  add('failing', 'boom', '{"n":1}', '--id', 'boom-1');
  const w = lanes('worker', url, 'failing', '--exit-when-empty', '--exec', 'false');
  if (w.code !== 0) fail('worker: ' + w.err);
  check(counts('failing').failed === 1, 'the worker failed boom-1');
  // The throughput chart's queue: 3 completed, 1 failed, counted per minute.
  for (const n of ['ok', 'ok', 'ok', 'bad']) add('tput', n, '{}');
  const m = lanes('worker', url, 'tput', '--exit-when-empty', '--metrics-points', '60',
    '--exec', 'sh', '-c', 'test "$LANES_JOB_NAME" != bad');
  if (m.code !== 0) fail('worker with metrics: ' + m.err);
  // A flow: report rep-1 (queue flows) waits for two parts in another
  // queue, part-1 with a child of its own.
  writeFileSync(join(tmp, 'flow.json'), JSON.stringify({
    name: 'report', queueName: 'flows', data: { month: 11 }, opts: { jobId: 'rep-1' },
    children: [
      { name: 'part', queueName: 'flowparts', data: { n: 1 }, opts: { jobId: 'part-1' },
        children: [{ name: 'piece', queueName: 'flowparts', opts: { jobId: 'piece-1' } }] },
      { name: 'part', queueName: 'flowparts', data: { n: 2 }, opts: { jobId: 'part-2' } },
    ],
  }));
  const f = lanes('jobs', url, 'flow', join(tmp, 'flow.json'));
  if (f.code !== 0) fail('flow: ' + f.err);
  // st-1 waits for the child its run added (--exec exit 78); bo-1 has a
  // custom backoff type with a jitter.
  add('steps', 'st', '{}', '--id', 'st-1');
  const st = lanes('worker', url, 'steps', '--exit-when-empty', '--exec', 'sh', '-c',
    '"$0" jobs "$LANES_STORE_URL" add --parent "$LANES_JOB_QUEUE:$LANES_JOB_ID" stepparts k ' +
    '"{}" >/dev/null && exit 78', lanesBin);
  if (st.code !== 0) fail('worker steps: ' + st.err);
  add('retries', 'n', '{}', '--id', 'bo-1', '--backoff', 'linear:7:0.25');
  const s = lanes('jobs', url, 'schedule', 'nightly', 'digest', '--cron', '0 3 * * *', 'digest');
  if (s.code !== 0) fail('schedule: ' + s.err);
  if (lanes('jobs', url, 'schedule', 'ro', 'keep', '--every', '3600000', 'keep').code !== 0)
    fail('schedule ro');
}

// The queue page's throughput chart, drawn from the metrics: bars of the
// 3 completed and the 1 failed job; a queue without metrics says so.
async function throughput(page, base) {
  await page.goto(base + '/#/queue/tput?state=completed');
  await page.waitForSelector('#throughput[data-ready="drawn"] svg');
  const sum = (cls) => page.$$eval(`#throughput rect.bar.${cls}`,
    (rs) => rs.reduce((a, r) => a + Number(r.dataset.n), 0));
  check(await page.getAttribute('#throughput', 'data-completed') === '3' &&
    await sum('completed') === 3, 'throughput chart: bars of the 3 completed jobs');
  check(await page.getAttribute('#throughput', 'data-failed') === '1' &&
    await sum('failed') === 1, 'throughput chart: a bar of the failed job');
  await page.screenshot({ path: join(outDir, 'dash-chart-' + store + '.png'), fullPage: true });
  await page.goto(base + '/#/queue/mail');
  await page.waitForSelector('#throughput[data-ready="empty"]');
  check((await page.textContent('#throughput')).includes('--metrics-points'),
    'throughput chart: a queue without metrics says how to get them');
}

async function cell(page, queue, state) {
  return (await page.textContent(`#queues tr[data-queue="${queue}"] td[data-state="${state}"]`))
    .trim();
}

// The queue list, a job's data, and a write refused without the token.
async function readAndRefuse(page, base) {
  await page.goto(base + '/');
  await page.waitForSelector('#queues tr[data-queue="mail"]');
  check(await cell(page, 'mail', 'waiting') === '2', 'queue list: mail has 2 waiting');
  check(await cell(page, 'mail', 'delayed') === '1', 'queue list: mail has 1 delayed');
  check(await cell(page, 'failing', 'failed') === '1', 'queue list: failing has 1 failed');
  check(await cell(page, 'flows', 'waiting-children') === '1',
    'queue list: flows has 1 waiting-children');
  await page.screenshot({ path: join(outDir, 'dash-' + store + '.png'), fullPage: true });

  await page.click('#queues tr[data-queue="mail"] a');
  await page.waitForSelector('#jobs tr[data-job="mail-1"]');
  await page.click('#jobs tr[data-job="mail-1"] a');
  await page.waitForSelector('#job-data');
  check((await page.textContent('#job-data')).includes('ada@example.com'),
    "job page: mail-1's data is shown");
  check((await page.textContent('#job-data')).includes('<img src=x') &&
    await page.$('#job-data img') === null, 'job page: data is shown as text, never as HTML');

  const r = await post(page, '/api/queues/mail/jobs/mail-2/remove', { 'X-Lanes-Dash': '1' });
  check(r.status === 401 && r.body.error.code === 'unauthorized',
    'a write without the token is refused (401, JSON)');
  const wrong = await post(page, '/api/queues/mail/jobs/mail-2/remove',
    { Authorization: 'Bearer wrong' });
  check(wrong.status === 401, 'a write with a wrong token is refused');
  check(lanes('jobs', url, 'get', 'mail', 'mail-2').code === 0, '... and mail-2 is still there');
}

// Opens a job's page and waits until that job's page (not the one before
// it, which stays on screen until the new answer is in) is drawn.
async function openJob(page, base, queue, id) {
  await page.goto(base + '/#/queue/' + queue + '/job/' + id);
  await page.waitForFunction((want) =>
    document.getElementById('job-id')?.textContent === want, id);
}

// Retry, promote and remove through the page's buttons, with the token.
async function actions(page, base) {
  await page.fill('#token', TOKEN);
  await page.click('#token-form button');
  await openJob(page, base, 'failing', 'boom-1');
  await page.click('button[data-action="retry"]');
  await page.waitForSelector('#banner:not([hidden])');
  let k = counts('failing');
  check(k.failed === 0 && k.waiting === 1, 'retry: boom-1 is waiting again in the store');

  lanes('jobs', url, 'add', 'again', 'n', '{}', '--id', 'again-1');
  check(lanes('worker', url, 'again', '--exit-when-empty', '--exec', 'true').code === 0 &&
    counts('again').completed === 1, 'again-1 completed');
  await openJob(page, base, 'again', 'again-1');
  await page.click('button[data-action="retry"]');
  await page.waitForSelector('#banner:not([hidden])');
  k = counts('again');
  check(k.completed === 0 && k.waiting === 1, 'run again: again-1 is waiting again in the store');

  await openJob(page, base, 'mail', 'mail-3');
  await page.click('button[data-action="promote"]');
  await page.waitForSelector('#banner:not([hidden])');
  await page.waitForFunction(() => document.querySelector('.badge.waiting') !== null);
  k = counts('mail');
  check(k.delayed === 0 && k.waiting === 3, 'promote: mail-3 is waiting in the store');

  await openJob(page, base, 'mail', 'mail-2');
  await page.click('button[data-action="remove"]');
  await page.waitForSelector('#jobs');
  check(lanes('jobs', url, 'get', 'mail', 'mail-2').code === 4, 'remove: mail-2 is gone');
  check(counts('mail').waiting === 2, 'remove: mail has 2 waiting');
}

// A job's data edited through its page (the exact text stored; a text
// that is not JSON refused with the store's message, nothing changed), and
// its priority changed.
async function edits(page, base) {
  const text = '{"to": "ada@example.com" , "n": 1.50}';
  await openJob(page, base, 'mail', 'mail-1');
  await page.click('#edit-data-panel summary');
  await page.fill('#edit-data', text);
  await page.click('button[data-action="save-data"]');
  await page.waitForFunction(() => document.getElementById('job-data')?.textContent
    .includes('1.5'));
  check(lanes('jobs', url, 'get', 'mail', 'mail-1').out.includes('data         ' + text + '\n'),
    'edit data: the text is stored as written');
  await page.click('#edit-data-panel summary');
  await page.fill('#edit-data', '{"to":');
  await page.click('button[data-action="save-data"]');
  await page.waitForSelector('#banner.error');
  check((await page.textContent('#banner')).includes('not valid JSON') &&
    lanes('jobs', url, 'get', 'mail', 'mail-1').out.includes(text),
  "edit data: a text that is not JSON is refused with the store's message, nothing changed");
  await page.fill('#edit-priority', '3');
  await page.click('button[data-action="change-priority"]');
  await page.waitForFunction(() => document.querySelector('.badge.prioritized') !== null);
  const j = JSON.parse(lanes('jobs', url, 'get', 'mail', 'mail-1', '--json').out);
  check(j.priority === 3 && j.state === 'prioritized',
    'change priority: mail-1 is prioritized with priority 3 in the store');
}

async function readOnly(ctx) {
  const d = await startDash('--read-only', '--token-file', join(tmp, 'token'));
  try {
    const page = await ctx.newPage();
    await page.goto(d.base + '/#/queue/mail/job/mail-1');
    await page.waitForSelector('#job-data');
    check(await page.$('button[data-action="remove"]') === null &&
      await page.$('#edits') === null, 'read-only: no Remove button, no edits');
    await page.goto(d.base + '/#/queue/steps/job/st-1');
    await page.waitForSelector('#flow[data-ready="drawn"]');
    check(await page.$('button[data-action="remove-tree"]') === null,
      'read-only: no Remove with children button');
    await page.goto(d.base + '/#/queue/ro');
    await page.waitForSelector('#schedulers tr[data-scheduler="keep"]');
    check(await page.$('button[data-action="remove-scheduler"]') === null,
      'read-only: no Remove button for a scheduler');
    const r = await post(page, '/api/queues/mail/jobs/mail-1/remove',
      { Authorization: 'Bearer ' + TOKEN });
    check(r.status === 403 && r.body.error.code === 'read_only',
      'read-only: a write with the token is refused (403, JSON)');
    check(lanes('jobs', url, 'get', 'mail', 'mail-1').code === 0, '... and mail-1 is there');
  } finally {
    await stopDash(d);
  }
}

const nodeState = (page, id) => page.getAttribute(`#flow-tree li[data-node="${id}"]`,
  'data-state');

// A flow parent under its queue's waiting-children tab, its page's flow
// panel (children, tree, links both ways), and the states once a worker
// ran the children and then the parent.
async function flows(page, base) {
  await page.goto(base + '/#/queue/flows?state=waiting-children');
  await page.waitForSelector('#jobs tr[data-job="rep-1"]');
  check((await page.textContent('a[data-tab="waiting-children"]')).includes('1'),
    'waiting-children tab: its count, and it lists the parent rep-1');
  await page.click('#jobs tr[data-job="rep-1"] a');
  await page.waitForSelector('#flow[data-ready="drawn"]');
  check(await page.$$eval('#flow-children tbody tr', (rs) => rs.map((r) => r.dataset.child)
    .sort().join()) === 'part-1,part-2', "flow: the parent's page lists its 2 children");
  check(await nodeState(page, 'rep-1') === 'waiting-children' &&
    await nodeState(page, 'part-1') === 'waiting-children' &&
    await nodeState(page, 'piece-1') === 'waiting' && await nodeState(page, 'part-2') === 'waiting',
    'flow: the tree shows the parent, both children and the grandchild with their states');
  check((await page.textContent('#flow-parent')).includes('a root'), 'flow: the root has no parent');
  await page.click('#flow-children tr[data-child="part-1"] a');
  await page.waitForSelector('#flow[data-ready="drawn"] #flow-parent a');
  check(await page.textContent('#job-id') === 'part-1' &&
    (await page.textContent('#flow-parent a')).includes('rep-1') &&
    await page.$('#flow-tree li.self[data-node="part-1"]') !== null,
    "flow: a child's page links its parent, and its tree marks it within the whole flow");
  await page.click('#flow-parent a');
  // part-1's drawn panel stays on screen until rep-1's page replaces it:
  // wait for the panel that marks rep-1 itself.
  await page.waitForSelector('#flow[data-ready="drawn"] #flow-tree li.self[data-node="rep-1"]');
  check(await page.textContent('#job-id') === 'rep-1', "flow: the parent link opens rep-1's page");
  await page.screenshot({ path: join(outDir, 'dash-flow-' + store + '.png'), fullPage: true });

  for (const queue of ['flowparts', 'flows']) {
    const w = lanes('worker', url, queue, '--exit-when-empty', '--exec', 'sh', '-c',
      'printf \'{"done":"%s"}\' "$LANES_JOB_ID"');
    if (w.code !== 0) fail('worker ' + queue + ': ' + w.err);
  }
  await page.reload();
  await page.waitForSelector('#flow[data-ready="drawn"]');
  check(await nodeState(page, 'rep-1') === 'completed' &&
    await nodeState(page, 'part-1') === 'completed' &&
    await nodeState(page, 'piece-1') === 'completed' &&
    await nodeState(page, 'part-2') === 'completed',
    'flow: after the workers ran, the children and the parent show completed');
  const row = await page.textContent('#flow-children tr[data-child="part-2"]');
  check(row.includes('processed') && row.includes('{"done":"part-2"}'),
    "flow: a child's row shows its status and result");
  check(await page.textContent('.badge.completed') === 'completed', 'flow: rep-1 is completed');
  await page.click('button[data-action="remove-tree"]');
  await page.waitForSelector('#jobs');
  check(['flows rep-1', 'flowparts part-1', 'flowparts part-2', 'flowparts piece-1'].every((k) =>
    lanes('jobs', url, 'get', ...k.split(' ')).code === 4),
  'flow: Remove with children removed rep-1 and its whole tree from the store');
}

// A job in waiting-children after its run (it waits for the child it
// added) is marked so in its queue's list and on its page, which offers
// to remove it with its children; a custom backoff type and its jitter
// are shown; a job of no flow has no Remove with children.
async function stepsAndBackoff(page, base) {
  await page.goto(base + '/#/queue/steps?state=waiting-children');
  await page.waitForSelector('#jobs tr[data-job="st-1"]');
  check(await page.textContent('#jobs tr[data-job="st-1"] .badge.waited') === 'waited after run 1',
    'waiting-children list: st-1 is marked as waiting after its run');
  await openJob(page, base, 'steps', 'st-1');
  await page.waitForSelector('#flow[data-ready="drawn"]');
  check((await page.textContent('#job-waited')).includes('after run 1') &&
    await page.$('button[data-action="remove-tree"]') !== null,
  "job page: st-1 says it waits for its handler's children, and offers Remove with children");
  await openJob(page, base, 'retries', 'bo-1');
  check(await page.textContent('#job-backoff') === 'linear (custom type) 7 ms, jitter 0.25',
    'job page: a custom backoff type with its jitter');
  await page.waitForSelector('#flow[data-ready="none"]');
  check(await page.$('button[data-action="remove-tree"]') === null &&
    await page.$('button[data-action="remove"]') !== null,
  'job page: a job of no flow has Remove but not Remove with children');
}

// The scheduler table: schedule and next run; Remove removes it.
async function schedulers(page, base) {
  await page.goto(base + '/#/queue/nightly');
  await page.waitForSelector('#schedulers tr[data-scheduler="digest"]');
  const row = await page.textContent('#schedulers tr[data-scheduler="digest"]');
  check(row.includes('cron 0 3 * * *') && !row.includes('—'),
    'schedulers: the schedule and the next run are shown');
  await page.click('#schedulers button[data-action="remove-scheduler"]');
  await page.waitForSelector('#banner:not([hidden])');
  await page.waitForFunction(() => document.getElementById('schedulers') === null);
  const r = lanes('jobs', url, 'schedules', 'nightly');
  check(r.code === 0 && !r.out.includes('digest'), 'schedulers: Remove removed it in the store');
}

// The workers panel of a queue's page: a running `lanes worker` shows
// (refreshed without reloading the page), and is gone once it stopped.
let idleWorker = null;
async function workersPanel(page, base) {
  idleWorker = spawn(lanesBin, ['worker', url, 'idle', '--exec', 'true'], { stdio: 'ignore' });
  const name = 'lanes-' + idleWorker.pid;
  await page.goto(base + '/#/queue/idle');
  await page.waitForSelector('#workers-table');
  await page.waitForFunction((n) => [...document.querySelectorAll('#workers-table tbody tr')]
    .some((tr) => tr.textContent.includes(n)), name);
  const row = await page.textContent('#workers-table tbody tr');
  check(row.includes(name) && row.includes('lanes'),
    'workers panel: the running lanes worker is listed (' + name + ')');
  const exited = new Promise((resolve) => idleWorker.on('exit', (code) => resolve(code)));
  idleWorker.kill('SIGTERM');
  check(await exited === 0, 'the worker stops on SIGTERM');
  idleWorker = null;
  await page.waitForFunction(() =>
    document.getElementById('workers-count')?.textContent === '0', null, { timeout: 10000 });
  check(await page.$('#workers-table tbody tr') === null,
    'workers panel: the stopped worker is gone');
}

function cleanup() {
  if (idleWorker) idleWorker.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
  if (redisPrefix === null) return;
  const script = "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end";
  spawnSync('redis-cli', ['-u', process.env.LANES_TEST_REDIS_URL.split('?')[0], 'EVAL', script,
    '0', redisPrefix + ':*'], { timeout: 10000 });
}

// "more →" pages by the last row's cursor (after= in the address): the
// second page starts right after the first.
async function paging(page, base) {
  for (let i = 0; i < 25; i++) add('pages', 'p', '{}', '--id', 'pg-' + String(i).padStart(2, '0'));
  await page.goto(base + '/#/queue/pages');
  await page.waitForSelector('#jobs tr[data-job="pg-19"]');
  check((await page.textContent('#range')).startsWith('1–20 of 25'), 'paging: 1–20 of 25');
  await page.click('a:has-text("more →")');
  await page.waitForSelector('#jobs tr[data-job="pg-20"]');
  const ids = await page.$$eval('#jobs tr[data-job]', (rs) => rs.map((r) => r.dataset.job));
  check(ids.join(' ') === 'pg-20 pg-21 pg-22 pg-23 pg-24' &&
    (await page.textContent('#range')).startsWith('21–25 of 25') &&
    page.url().includes('after='), 'paging: more → gives the rows after the last, by cursor');
}

let ctx = null;
let dash = null;
try {
  writeFileSync(join(tmp, 'token'), TOKEN + '\n');
  fill();
  refusesOpenListen();
  dash = await startDash('--token-file', join(tmp, 'token'));
  ctx = await chromium.launchPersistentContext(join(tmp, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1100, height: 520 },
    timeout: 30000,
  });
  ctx.setDefaultTimeout(10000);
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('dialog', (dlg) => dlg.accept());
  page.on('pageerror', (e) => fail('page error: ' + e.message));
  await readAndRefuse(page, dash.base);
  await throughput(page, dash.base);
  await actions(page, dash.base);
  await edits(page, dash.base);
  await flows(page, dash.base);
  await stepsAndBackoff(page, dash.base);
  await schedulers(page, dash.base);
  await workersPanel(page, dash.base);
  await paging(page, dash.base);
  check(await stopDash(dash) === 0, 'lanes dash stops on SIGTERM with exit 0');
  dash = null;
  await readOnly(ctx);
  console.log(store + ': all passed');
} catch (e) {
  if (!process.exitCode) console.error('FAIL: ' + (e.stack || e));
  process.exitCode = 1;
} finally {
  if (ctx) await ctx.close();
  if (dash) await stopDash(dash);
  cleanup();
  clearTimeout(watchdog);
}
