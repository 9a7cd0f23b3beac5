// edit.js - the edits of lanes dash (docs/dash.md "Edits"). On a job's
// page: its priority (and lifo) while it waits, is prioritized, delayed or
// paused; its delay while delayed; its data in any state, as the exact
// JSON text it is stored as, saved byte for byte (the store refuses a text
// that is not JSON, and its message is shown). On a queue's page: promote
// every delayed job, the counts per priority of its prioritized jobs, and
// the job holding a deduplication id with a button to release the id.
// Uses el, api, q, qhref, jhref, action of app.js; a read-only dashboard
// gets no edit (action gives null). Text is always put in as text.
'use strict';

const PRIORITY_STATES = ['waiting', 'prioritized', 'delayed', 'paused'];

function editField(label, input) {
  return el('label', {}, label + ' ', input);
}

// The edit forms a job's state allows, or null when read-only.
function jobEdits(name, j) {
  if (info && info.read_only) return null;
  const base = 'queues/' + q(name) + '/jobs/' + q(j.id) + '/';
  const parts = [];
  if (PRIORITY_STATES.includes(j.state)) {
    const prio = el('input', { type: 'number', id: 'edit-priority', min: 0, max: 2097151,
      value: j.priority });
    const lifo = el('input', { type: 'checkbox', id: 'edit-lifo', checked: j.lifo });
    parts.push(el('div', { class: 'bar' }, editField('Priority', prio),
      el('label', {}, lifo, ' lifo (first of its priority)'),
      action('Change priority', () => base + 'priority?' + new URLSearchParams({
        priority: prio.value, lifo: lifo.checked ? 1 : 0 }), { name: 'change-priority',
        done: () => 'Priority of ' + j.id + ' changed to ' + prio.value })));
  }
  if (j.state === 'delayed') {
    const ms = el('input', { type: 'number', id: 'edit-delay', min: 0,
      value: Math.max(0, j.run_at_ms - Date.now()) });
    parts.push(el('div', { class: 'bar' }, editField('Run in', ms), 'ms from now',
      action('Change delay', () => base + 'delay?' + new URLSearchParams({ delay_ms: ms.value }),
        { name: 'change-delay', done: () => 'Delay of ' + j.id + ' changed' })));
  }
  const text = el('textarea', { id: 'edit-data', rows: 8, cols: 80, spellcheck: 'false',
    'aria-label': 'data as JSON text' });
  text.value = j.data_text === null ? '' : j.data_text;
  parts.push(el('details', { id: 'edit-data-panel' }, el('summary', {}, 'Edit data'),
    el('p', { class: 'muted' }, 'The JSON text as stored. Saved as you write it, byte for byte.'),
    text, el('div', { class: 'bar' }, action('Save data', base + 'data', { name: 'save-data',
      body: () => text.value, done: () => 'Data of ' + j.id + ' saved' }))));
  return el('section', { id: 'edits' }, el('h2', {}, 'Edit'), parts);
}

// "Promote all delayed" for a queue with delayed jobs.
function promoteAllButton(name, counts) {
  if (!counts.delayed) return null;
  return action('Promote all delayed', 'queues/' + q(name) + '/promote-all', {
    name: 'promote-all', confirm: 'Make every delayed job of ' + name + ' run now?',
    done: (x) => 'Promoted ' + x.promoted + ' delayed jobs' });
}

// The counts per priority of a queue's prioritized jobs (the lowest 20
// priorities), drawn once the answer is in: data-ready "drawn" or "error".
function prioritiesPanel(name, counts) {
  if (!counts.prioritized && !counts.paused) return null; // paused: SQLite lists them so
  const box = el('section', { id: 'priorities' }, el('h2', {}, 'Prioritized jobs per priority'));
  api('queues/' + q(name) + '/priorities').then((r) => {
    if (!r.priorities.length) box.append(el('p', { class: 'muted' }, 'No prioritized jobs.'));
    else box.append(el('table', {}, el('thead', {}, el('tr', {}, el('th', { class: 'num' }, 'Priority'),
      el('th', { class: 'num' }, 'Jobs'))),
    el('tbody', {}, r.priorities.map((p) => el('tr', { 'data-priority': p.priority },
      el('td', { class: 'num' }, String(p.priority)), el('td', { class: 'num' }, String(p.count)))))),
    r.more ? el('p', { class: 'muted' }, 'Only the lowest ' + r.priorities.length +
      ' priorities are shown.') : '');
    box.dataset.ready = 'drawn';
  }).catch((e) => {
    box.append(el('p', { class: 'muted' }, e.message));
    box.dataset.ready = 'error';
  });
  return box;
}

// A deduplication id's lookup (the queue page's ?dedup=ID): the job that
// holds it, a link, and Release key; data-ready "drawn" once answered.
function dedupPanel(name, params) {
  const input = el('input', { name: 'dedup', value: params.dedup || '',
    placeholder: 'deduplication id', 'aria-label': 'deduplication id' });
  const form = el('form', { class: 'bar', id: 'dedup' }, 'Deduplication id', input,
    el('button', { type: 'submit' }, 'Find its job'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const h = qhref(name, { ...params, dedup: input.value || undefined });
    if (location.hash === h) route(); else location.hash = h;
  });
  const box = el('section', { id: 'dedup-panel' }, form);
  if (!params.dedup) return box;
  const out = el('div', { id: 'dedup-result', class: 'bar' }, 'Looking up…');
  box.append(out);
  api('queues/' + q(name) + '/dedup/' + q(params.dedup)).then((r) => {
    if (r.job_id === null) {
      out.replaceChildren('No job holds deduplication id "' + r.dedup_id + '" now.');
    } else {
      out.replaceChildren('Deduplication id "' + r.dedup_id + '" is held by job ',
        el('a', { href: jhref(name, r.job_id), id: 'dedup-holder' }, r.job_id),
        ' (' + r.state + ')', action('Release key', 'queues/' + q(name) + '/dedup/' +
          q(r.dedup_id) + '/remove', { name: 'dedup-remove', danger: true,
          confirm: 'Release deduplication id ' + r.dedup_id + '? The next add with it makes a ' +
            'new job.', done: (x) => x.removed ? 'Released ' + r.dedup_id
            : r.dedup_id + ' was no longer held' }));
    }
    out.dataset.ready = 'drawn';
  }).catch((e) => {
    out.replaceChildren(e.message);
    out.dataset.ready = 'error';
  });
  return box;
}
