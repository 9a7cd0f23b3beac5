// lanes dash: the page of `lanes dash` (docs/dash.md). Plain DOM, no
// framework, no build step; every job field is put in with textContent,
// never as HTML. Routes (the URL hash):
//   #/                         queues with their counts
//   #/queue/Q?state=S&offset=N&q=TEXT   jobs of one state, paged, searched
//   #/queue/Q/job/ID           one job
'use strict';

const STATES = ['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed', 'paused',
  'waiting-children'];
const PAGE = 20;
let info = null;
let timer = null;
let pending = null; // a message to show after the next route change

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'onclick') e.addEventListener('click', v);
    else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}

// Replace main's content (null / undefined kids are left out).
function show(main, ...kids) {
  main.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined));
}

function token() { return sessionStorage.getItem('lanes-dash-token') || ''; }

// body: a string sent as it is (a job's data, edit.js), or undefined.
async function api(path, method, sent) {
  const headers = { 'X-Lanes-Dash': '1' };
  if (token()) headers.Authorization = 'Bearer ' + token();
  const res = await fetch('/api/' + path, { method: method || 'GET', headers, body: sent });
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) {
    const msg = body && body.error ? body.error.message : res.statusText;
    const err = new Error(msg + ' (HTTP ' + res.status + ')');
    err.status = res.status;
    throw err;
  }
  return body;
}

function banner(text, isError) {
  const b = document.getElementById('banner');
  b.textContent = text;
  b.className = isError ? 'error' : '';
  b.hidden = !text;
}

const q = encodeURIComponent;
function qhref(name, params) {
  // Unset parameters (undefined, null, '') are left out: URLSearchParams
  // would write q=undefined, a search for "undefined".
  const set = Object.entries(params || {}).filter(([, v]) => v !== undefined && v !== null &&
    v !== '');
  const p = new URLSearchParams(set).toString();
  return '#/queue/' + q(name) + (p ? '?' + p : '');
}
function jhref(name, id) { return '#/queue/' + q(name) + '/job/' + q(id); }
function when(ms) { return ms ? new Date(ms).toLocaleString() : '—'; }
function pretty(v) { return v === null || v === undefined ? '—' : JSON.stringify(v, null, 2); }

// A button that runs a write, then re-renders (or goes to 'after'). path
// may be a function (read when clicked, as opts.body: edit.js's forms).
function action(label, path, opts) {
  opts = opts || {};
  if (info && info.read_only) return null;
  return el('button', {
    class: opts.danger ? 'danger' : null, 'data-action': opts.name || label,
    onclick: async () => {
      if (opts.confirm && !window.confirm(opts.confirm)) return;
      try {
        const r = await api(typeof path === 'function' ? path() : path, 'POST',
          opts.body ? opts.body() : undefined);
        const msg = opts.done ? opts.done(r) : label + ': done';
        banner(msg);
        if (opts.after) { pending = msg; location.hash = opts.after; } else route();
      } catch (e) { banner(label + ' failed: ' + e.message, true); }
    },
  }, label);
}

// ----------------------------------------------------------------- queues

async function queuesView(main) {
  const r = await api('queues');
  const head = el('tr', {}, el('th', {}, 'Queue'), el('th', {}, ''),
    STATES.map((s) => el('th', { class: 'num' }, s)));
  const rows = r.queues.map((qu) => el('tr', { 'data-queue': qu.name },
    el('td', {}, el('a', { href: qhref(qu.name) }, qu.name)),
    el('td', {}, qu.paused ? el('span', { class: 'badge paused' }, 'paused') : ''),
    STATES.map((s) => {
      const n = qu.counts[s];
      return el('td', { class: 'num' + (n ? '' : ' zero'), 'data-state': s },
        el('a', { href: qhref(qu.name, { state: s }) }, String(n)));
    })));
  show(main, el('h1', {}, 'Queues'),
    rows.length ? el('table', { id: 'queues' }, el('thead', {}, head), el('tbody', {}, rows))
      : el('p', { class: 'muted' }, 'No queues in this store yet.'),
    r.truncated ? el('p', { class: 'muted' }, 'Only the first 1000 queues are listed.') : null);
}

// ------------------------------------------------------------------ queue

function pager(name, r, params) {
  const bar = el('div', { class: 'bar' });
  if (r.search) {
    const s = r.search;
    bar.append(el('span', { class: 'muted' }, 'Searched ' + s.scanned + ' ' + r.state +
      ' jobs from #' + (r.offset + 1) + ' for names or data containing "' + s.q + '".'));
    if (s.more) bar.append(el('a', { href: qhref(name, { ...params, offset: s.next_offset,
      after: r.next_after || '' }) }, 'Search the next ' + info.search_window));
    return bar;
  }
  const end = Math.min(r.offset + r.jobs.length, r.total);
  bar.append(el('span', { class: 'muted', id: 'range' },
    r.total ? (r.offset + 1) + '–' + end + ' of ' + r.total : 'No ' + r.state + ' jobs.'));
  // Forward by the last row's cursor: the same cost at any depth (offset
  // only numbers the rows); back by offset.
  if (r.offset > 0) bar.append(el('a', { href: qhref(name, { ...params,
    offset: Math.max(0, r.offset - PAGE), after: '' }) }, '← newer'));
  if (end < r.total && r.next_after) bar.append(el('a', { href: qhref(name, { ...params,
    offset: end, after: r.next_after }) }, 'more →'));
  return bar;
}

// A job in waiting-children after a run: its handler moved it there
// (ln_job_wait_children, `lanes worker --exec` exit 78) to wait for the
// children it added; a flow parent added in that state has not run.
function waitedBadge(j) {
  if (!j.waited) return null;
  return el('span', { class: 'badge waited', title: 'moved here by its handler after run ' +
    j.attempts_started + ': it runs again once its children are done' },
  'waited after run ' + j.attempts_started);
}

function backoffText(j) {
  return j.backoff + (j.backoff_custom ? ' (custom type)' : '') + ' ' + j.backoff_ms + ' ms' +
    (j.backoff_jitter ? ', jitter ' + j.backoff_jitter : '');
}

function jobRow(name, j) {
  return el('tr', { 'data-job': j.id },
    el('td', {}, el('a', { href: jhref(name, j.id) }, j.id)),
    el('td', {}, j.name, j.waited ? ' ' : null, waitedBadge(j)),
    el('td', { class: 'num' }, j.attempts_made + '/' + j.attempts),
    el('td', {}, when(j.created_ms)),
    el('td', {}, when(j.finished_ms || j.run_at_ms)),
    el('td', { class: 'preview', title: j.failed_reason || j.data_preview },
      j.failed_reason || j.data_preview));
}

async function queueView(main, name, params) {
  const state = params.state || 'waiting';
  const qs = new URLSearchParams({ state, offset: params.offset || 0, limit: PAGE });
  if (params.q) qs.set('q', params.q);
  if (params.after) qs.set('after', params.after);
  const [r, qu, sc] = await Promise.all([api('queues/' + q(name) + '/jobs?' + qs),
    api('queues/' + q(name)), api('queues/' + q(name) + '/schedulers')]);
  const tabs = el('nav', { class: 'tabs' }, STATES.map((s) => el('a', {
    href: qhref(name, { state: s }), class: s === state ? 'on' : null, 'data-tab': s,
  }, s + ' ' + r.counts[s])));
  const search = el('form', { class: 'bar', id: 'search' },
    el('input', { name: 'q', value: params.q || '', placeholder: 'job id, or text in name/data' }),
    el('button', { type: 'submit' }, 'Search'));
  search.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = new FormData(search).get('q');
    location.hash = qhref(name, text ? { state, q: text } : { state });
  });
  const base = 'queues/' + q(name) + '/';
  const actions = el('div', { class: 'bar' },
    qu.paused ? action('Resume', base + 'resume', { name: 'resume' })
      : action('Pause', base + 'pause', { name: 'pause' }),
    action('Retry all failed', base + 'retry-all', { name: 'retry-all',
      done: (x) => 'Retried ' + x.retried + ' failed jobs' }),
    action('Clean completed', base + 'clean?state=completed', { name: 'clean-completed',
      danger: true, confirm: 'Delete every completed job of ' + name + '?',
      done: (x) => 'Removed ' + x.removed + ' completed jobs' }),
    action('Clean failed', base + 'clean?state=failed', { name: 'clean-failed', danger: true,
      confirm: 'Delete every failed job of ' + name + '?',
      done: (x) => 'Removed ' + x.removed + ' failed jobs' }),
    promoteAllButton(name, r.counts)); // edit.js
  const idHit = r.search && r.search.id_match.length ? el('p', {}, 'Job with this id: ',
    el('a', { href: jhref(name, r.search.id_match[0].id) }, r.search.id_match[0].id),
    ' (' + r.search.id_match[0].state + ')') : null;
  const table = el('table', { id: 'jobs' }, el('thead', {}, el('tr', {},
    ['Id', 'Name', 'Attempts', 'Added', state === 'delayed' ? 'Due' : 'Finished / runs at',
      'Data or reason'].map((h) => el('th', {}, h)))),
  el('tbody', {}, r.jobs.map((j) => jobRow(name, j))));
  show(main, el('p', {}, el('a', { href: '#/' }, '← queues')),
    el('h1', {}, name, ' ', qu.paused ? el('span', { class: 'badge paused' }, 'paused') : ''),
    actions, throughputChart(name), schedulersTable(name, sc.schedulers),
    prioritiesPanel(name, r.counts), dedupPanel(name, params), tabs, search, idHit, // edit.js
    table, pager(name, r, { state, q: params.q || undefined }),
    workersPanel(name)); // workers.js
}

// The queue's job schedulers (none: nothing shown), each with a Remove
// button (ln_jobs_unschedule) unless the dashboard is read-only.
function schedulersTable(name, list) {
  if (!list.length) return null;
  const what = (s) => s.every_ms ? 'every ' + s.every_ms + ' ms'
    : 'cron ' + s.pattern + (s.tz ? ' (' + s.tz + ')' : '');
  const remove = (s) => action('Remove', 'queues/' + q(name) + '/schedulers/' + q(s.id) +
    '/remove', { name: 'remove-scheduler', danger: true,
    confirm: 'Remove scheduler ' + s.id + ' (and its delayed next job)?',
    done: () => 'Removed scheduler ' + s.id });
  return el('table', { id: 'schedulers' }, el('thead', {}, el('tr', {},
    ['Scheduler', 'Schedule', 'Next run', 'Iterations', 'Job name', ''].map((h) =>
      el('th', {}, h)))),
  el('tbody', {}, list.map((s) => el('tr', { 'data-scheduler': s.id }, el('td', {}, s.id),
    el('td', {}, what(s)), el('td', {}, when(s.next_ms)),
    el('td', {}, String(s.iterations) + (s.limit ? ' of ' + s.limit : '')),
    el('td', {}, s.name), el('td', {}, remove(s))))));
}

// -------------------------------------------------------------------- job

async function jobView(main, name, id) {
  const j = await api('queues/' + q(name) + '/jobs/' + q(id));
  const base = 'queues/' + q(name) + '/jobs/' + q(id) + '/';
  const acts = el('div', { class: 'bar' },
    j.state === 'failed' ? action('Retry', base + 'retry', { name: 'retry' }) : null,
    j.state === 'completed' ? action('Run again', base + 'retry?state=completed',
      { name: 'retry', confirm: 'Run completed job ' + id + ' again (its result is cleared)?' })
      : null,
    j.state === 'delayed' ? action('Promote', base + 'promote', { name: 'promote' }) : null,
    j.state !== 'active' ? action('Remove', base + 'remove', { name: 'remove', danger: true,
      confirm: 'Remove job ' + id + '?', after: qhref(name, { state: j.state }),
      done: () => 'Removed job ' + id }) : null);
  // Once the flow panel knows the job has children: remove it with them.
  const onFlow = (r) => {
    if (!r.children_total || j.state === 'active') return;
    const b = action('Remove with children', base + 'remove-tree', { name: 'remove-tree',
      danger: true, confirm: 'Remove job ' + id + ' and all its children, every level down?',
      after: qhref(name, { state: j.state }),
      done: (x) => 'Removed job ' + id + ' with its children: ' + x.removed + ' jobs' });
    if (b) acts.append(b);
  };
  const waited = j.waited ? el('span', { id: 'job-waited' }, ' waiting for the children its ' +
    'handler added, after run ' + j.attempts_started + '; it runs again once they are done') : null;
  const facts = [
    ['State', [el('span', { class: 'badge ' + j.state }, j.state), waited]],
    ['Name', j.name], ['Attempts', j.attempts_made + ' failed of ' + j.attempts +
      ' allowed; ' + j.attempts_started + ' started; stalled ' + j.stalled + ' times'],
    ['Priority', j.priority], ['Backoff', el('span', { id: 'job-backoff' }, backoffText(j))],
    ['Added', when(j.created_ms)], ['Runs at', when(j.run_at_ms)],
    ['Started', when(j.started_ms)], ['Finished', when(j.finished_ms)],
    ['Trace id', j.trace_id || '—'], ['traceparent', j.traceparent || '—'],
    ['tracestate', j.tracestate || '—'],
  ];
  show(main, el('p', {}, el('a', { href: qhref(name, { state: j.state }) },
    '← ' + name + ' · ' + j.state)),
  el('h1', {}, 'Job ', el('span', { id: 'job-id' }, j.id)), acts,
  el('dl', {}, facts.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
  jobEdits(name, j), // edit.js
  flowPanel(name, j.id, onFlow), // flow.js
  el('h2', {}, 'Data'), el('pre', { id: 'job-data' }, pretty(j.data)),
  j.failed_reason ? [el('h2', {}, 'Failure reason'),
    el('pre', { id: 'job-reason' }, j.failed_reason)] : null,
  el('h2', {}, 'Result'), el('pre', { id: 'job-result' }, pretty(j.result)),
  el('h2', {}, 'Progress'), el('pre', {}, pretty(j.progress)),
  el('h2', {}, 'Logs (' + j.logs.length + ')'),
  el('pre', { id: 'job-logs' }, j.logs.length ? j.logs.join('\n') : '—'));
}

// ----------------------------------------------------------------- router

async function route() {
  clearInterval(timer);
  const main = document.getElementById('main');
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = Object.fromEntries(new URLSearchParams(query || ''));
  try {
    if (parts.length === 0) {
      await queuesView(main);
      timer = setInterval(() => queuesView(main).catch((e) => banner(e.message, true)), 2000);
    } else if (parts[0] === 'queue' && parts.length === 2) {
      await queueView(main, parts[1], params);
    } else if (parts[0] === 'queue' && parts.length === 4 && parts[2] === 'job') {
      await jobView(main, parts[1], parts[3]);
    } else {
      show(main, el('p', {}, 'No such page. ', el('a', { href: '#/' }, 'Queues')));
    }
  } catch (e) {
    show(main, el('p', { class: 'muted', id: 'error' }, e.message));
  }
}

async function start() {
  const fromUrl = new URLSearchParams(location.search).get('token');
  if (fromUrl) {
    sessionStorage.setItem('lanes-dash-token', fromUrl);
    history.replaceState(null, '', location.pathname + location.hash); // out of the history
  }
  const form = document.getElementById('token-form');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem('lanes-dash-token', document.getElementById('token').value);
    if (!info) location.reload(); else banner('Token set for this tab');
  });
  try {
    info = await api('info');
  } catch (e) {
    form.hidden = e.status !== 401; // off loopback even reading needs the token
    banner(e.status === 401 ? 'This dashboard needs its token: enter it above.' : e.message,
      true);
    show(document.getElementById('main'));
    return;
  }
  document.getElementById('store').textContent = info.url;
  document.getElementById('version').textContent = info.version;
  document.getElementById('mode').textContent = info.read_only ? 'read-only'
    : info.writes_need_token ? 'actions need the token' : '';
  form.hidden = info.read_only || !info.writes_need_token;
  const warning = info.warning ? 'Store warning: ' + info.warning : '';
  window.addEventListener('hashchange', () => {
    banner(pending || warning, !pending && !!warning);
    pending = null;
    route();
  });
  banner(warning, true);
  route();
}

start();
