// workers.js - the workers panel of a queue's page (docs/dash.md): the
// workers connected to the queue now (GET /api/queues/Q/workers), lanes
// runs and, on Redis, BullMQ's Node workers, refreshed every 2 s while
// the panel is on the page. Uses el, api, q and when of app.js.
'use strict';

const WORKERS_REFRESH_MS = 2000;

function workerRow(w) {
  return el('tr', { 'data-worker': w.id },
    el('td', {}, w.name || '(unnamed)'),
    el('td', {}, el('span', { class: 'badge ' + w.kind }, w.kind)),
    el('td', {}, w.addr || w.host || '—'),
    el('td', { class: 'num' }, w.pid ? String(w.pid) : '—'),
    el('td', {}, when(w.startedOn)),
    el('td', {}, when(w.seenOn)));
}

// The panel, filled now and again every WORKERS_REFRESH_MS until it leaves
// the page (a route change replaces it).
function workersPanel(name) {
  const count = el('span', { id: 'workers-count', class: 'muted' }, '…');
  const body = el('tbody', {});
  const panel = el('section', { id: 'workers' },
    el('h2', {}, 'Workers ', count),
    el('table', { id: 'workers-table' }, el('thead', {}, el('tr', {},
      ['Name', 'Kind', 'Where', 'Pid', 'Connected', 'Last seen'].map((h) => el('th', {}, h)))),
    body));
  let first = true;
  async function refresh() {
    if (!first && !panel.isConnected) return; // left the page: stop
    first = false;
    try {
      const r = await api('queues/' + q(name) + '/workers');
      count.textContent = String(r.workers.length);
      body.replaceChildren(...r.workers.map(workerRow));
    } catch (e) {
      count.textContent = '(' + e.message + ')';
    }
    setTimeout(refresh, WORKERS_REFRESH_MS);
  }
  refresh();
  return panel;
}
