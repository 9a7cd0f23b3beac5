// lanes dash: the throughput chart of a queue page (docs/dash.md), drawn
// as plain SVG from GET /api/queues/Q/metrics: the per-minute counts of
// completed and failed jobs that workers with --metrics-points N (BullMQ:
// metrics.maxDataPoints) write. Point i of a type is the jobs of the
// (i+1)-th minute before the minute of its prev_ts; the jobs since prev_ts
// (count - prev_count) belong to prev_ts's minute. Bars show the last
// MINUTES minutes up to now (the browser's clock) or prev_ts, whichever is
// later. Used by app.js (throughputChart).
'use strict';

const MINUTES = 60;
const SVGNS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// Jobs per minute of the epoch for one type: Map minute -> count.
function perMinute(t) {
  const m = new Map();
  if (!t.prev_ts) return m;
  const last = Math.floor(t.prev_ts / 60000);
  m.set(last, t.count - t.prev_count);
  t.data.forEach((n, i) => m.set(last - 1 - i, n));
  return m;
}

function drawChart(box, r) {
  const c = perMinute(r.completed);
  const f = perMinute(r.failed);
  const lastTs = Math.max(Date.now(), r.completed.prev_ts, r.failed.prev_ts);
  const end = Math.floor(lastTs / 60000);
  const minutes = [];
  for (let k = end - MINUTES + 1; k <= end; k++) minutes.push(k);
  const max = Math.max(1, ...minutes.map((k) => (c.get(k) || 0) + (f.get(k) || 0)));
  const W = 720; const H = 140; const L = 36; const B = 18; const bw = (W - L) / MINUTES;
  const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', height: H, role: 'img',
    'aria-label': 'jobs completed and failed per minute' });
  s.append(svg('line', { x1: L, y1: H - B, x2: W, y2: H - B, class: 'axis' }));
  s.append(svg('text', { x: L - 4, y: 10, 'text-anchor': 'end', class: 'tick' }, String(max)));
  s.append(svg('text', { x: L - 4, y: H - B, 'text-anchor': 'end', class: 'tick' }, '0'));
  minutes.forEach((k, i) => {
    const x = L + i * bw;
    const nc = c.get(k) || 0; const nf = f.get(k) || 0;
    const hc = (H - B - 12) * nc / max; const hf = (H - B - 12) * nf / max;
    const at = new Date(k * 60000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    for (const [n, h, y, cls] of [[nc, hc, H - B - hc, 'completed'],
      [nf, hf, H - B - hc - hf, 'failed']]) {
      if (!n) continue;
      const rect = svg('rect', { x: x + 1, y, width: Math.max(1, bw - 2), height: h,
        class: 'bar ' + cls, 'data-minute': k, 'data-n': n });
      rect.append(svg('title', {}, `${at}: ${n} ${cls}`));
      s.append(rect);
    }
    if (i % 15 === 0 || i === MINUTES - 1) {
      s.append(svg('text', { x: x + bw / 2, y: H - 4, 'text-anchor': 'middle', class: 'tick' },
        at));
    }
  });
  box.replaceChildren(s);
}

// The chart's section for queue name: filled once the metrics arrive.
function throughputChart(name) {
  const box = document.createElement('div');
  const sec = document.createElement('section');
  sec.id = 'throughput';
  const h = document.createElement('h2');
  h.textContent = 'Throughput (jobs per minute)';
  const legend = document.createElement('p');
  legend.className = 'muted';
  sec.append(h, legend, box);
  fetch('/api/queues/' + encodeURIComponent(name) + '/metrics?points=' + MINUTES,
    { headers: { 'X-Lanes-Dash': '1', ...(sessionStorage.getItem('lanes-dash-token')
      ? { Authorization: 'Bearer ' + sessionStorage.getItem('lanes-dash-token') } : {}) } })
    .then((res) => (res.ok ? res.json() : Promise.reject(new Error('HTTP ' + res.status))))
    .then((r) => {
      sec.dataset.completed = r.completed.count;
      sec.dataset.failed = r.failed.count;
      if (!r.completed.count && !r.failed.count) {
        legend.textContent = 'No metrics yet: workers count jobs per minute when started ' +
          'with --metrics-points N (BullMQ: metrics.maxDataPoints).';
        sec.dataset.ready = 'empty';
        return;
      }
      legend.textContent = r.completed.count + ' completed and ' + r.failed.count +
        ' failed counted in all (green completed, red failed).';
      drawChart(box, r);
      sec.dataset.ready = 'drawn';
    })
    .catch((e) => { legend.textContent = 'Metrics unavailable: ' + e.message; });
  return sec;
}
