// flow.js - the flow panel of a job's page (docs/dash.md "Flows"): the
// job's parent, its children with their status and result or failure
// reason, and the tree of its flow from the root, drawn as nested lists
// from GET /api/queues/Q/jobs/ID/flow (at most 200 nodes and 10 levels: a
// node with children left out says how many and links to its own page).
// Uses el, show, api, q, jhref of app.js. The panel's data-ready is "drawn",
// "none" (the job is in no flow) or "error" once the answer is in.
'use strict';

function flowLink(n) {
  if (!n.queue) return el('span', { class: 'muted' }, n.key || n.id);
  return el('a', { href: jhref(n.queue, n.id) }, n.queue + ' · ' + n.id);
}

function flowState(n) {
  return el('span', { class: 'badge ' + n.state }, n.state);
}

// The child's status as its parent records it, and its value (a result
// for processed, the reason for failed).
function flowStatus(n) {
  if (!n.status) return null;
  return el('span', { class: 'flow-status ' + n.status }, n.status,
    n.value !== null && n.value !== undefined ? el('code', {}, ' ' + n.value) : null);
}

function flowChildrenTable(r) {
  if (!r.children_total) return el('p', { class: 'muted' }, 'No children.');
  const rows = r.children.map((c) => el('tr', { 'data-child': c.id },
    el('td', {}, flowLink(c)), el('td', {}, c.name || '—'), el('td', {}, flowState(c)),
    el('td', {}, c.status), el('td', { class: 'preview', title: c.value || '' },
      c.value === null ? '—' : c.value)));
  return [el('table', { id: 'flow-children' }, el('thead', {}, el('tr', {},
    ['Child', 'Name', 'State', 'Status', 'Result or reason'].map((h) => el('th', {}, h)))),
  el('tbody', {}, rows)),
  r.children.length < r.children_total ? el('p', { class: 'muted' }, 'Showing ' +
      r.children.length + ' of ' + (r.children_total_capped ? 'at least ' : '') +
      r.children_total + ' children.') : null];
}

function flowNode(n) {
  const more = n.more ? el('li', { class: 'more muted' },
    '… ' + (n.children_total_capped ? 'at least ' : '') + n.more + ' more ',
    n.queue ? el('a', { href: jhref(n.queue, n.id) }, '(open ' + n.id + ')') : null) : null;
  const kids = (n.children || []).map(flowNode);
  return el('li', { 'data-node': n.id, 'data-queue': n.queue, 'data-state': n.state, class: n.self ? 'self' : null },
    el('span', { class: 'node' }, flowLink(n), ' ', n.name ? el('span', {}, n.name) : null, ' ',
      flowState(n), ' ', flowStatus(n)),
    kids.length || more ? el('ul', {}, kids, more) : null);
}

function flowTree(r) {
  const note = [];
  if (r.top.id !== r.root.id || r.top.queue !== r.root.queue) {
    note.push(el('p', { class: 'muted' }, 'The tree starts ' + r.limits.depth +
      ' levels up; its root is ', el('a', { href: jhref(r.root.queue, r.root.id) },
      r.root.queue + ' · ' + r.root.id), '.'));
  } else if (!r.root_reached) {
    note.push(el('p', { class: 'muted' }, 'The root is more than ' + r.levels_up +
      ' levels up.'));
  }
  return [note, el('ul', { id: 'flow-tree', class: 'tree' }, flowNode(r.tree)),
    el('p', { class: 'muted' }, r.nodes + ' jobs shown' + (r.truncated
      ? ' (at most ' + r.limits.nodes + ' and ' + r.limits.depth + ' levels)' : '') + '.')];
}

// onDrawn(answer), if given, is called once the job's flow is drawn.
function flowPanel(name, id, onDrawn) {
  const panel = el('section', { id: 'flow' }, el('h2', {}, 'Flow'),
    el('p', { class: 'muted' }, 'Loading…'));
  api('queues/' + q(name) + '/jobs/' + q(id) + '/flow').then((r) => {
    if (!r.parent && !r.children_total) {
      panel.replaceChildren(el('h2', {}, 'Flow'), el('p', { class: 'muted' }, 'Not in a flow.'));
      panel.dataset.ready = 'none';
      return;
    }
    show(panel, el('h2', {}, 'Flow'),
      el('p', { id: 'flow-parent' }, 'Parent: ', r.parent ? flowLink(r.parent) : '— (a root)'),
      el('h3', {}, 'Children (' + r.children_total + ')'), flowChildrenTable(r),
      el('h3', {}, 'Tree'), flowTree(r));
    if (onDrawn) onDrawn(r);
    panel.dataset.ready = 'drawn';
  }).catch((e) => {
    panel.replaceChildren(el('h2', {}, 'Flow'), el('p', { class: 'muted' }, e.message));
    panel.dataset.ready = 'error';
  });
  return panel;
}
