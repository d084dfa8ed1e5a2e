// Timeline: allocated / active / reserved / requested over the event index, drawn on a canvas from
// min/max buckets the engine computes for the visible window (one column per pixel, so millions
// of events pan and zoom at the cost of a few thousand points). Wheel zooms, drag pans, a click
// selects the event under the cursor.
import type { ViewContext } from './index';
import type { EventDetail, Timeline } from '../types';
import { bytes, el, eventLabel, int } from '../ui/format';
import { fitCanvas } from '../ui/canvas';
import { newestOnly, panBy, zoomAround } from '../ui/window';
import { eventPanel } from '../ui/event-panel';

const COLORS = {
  reserved: '#cbd5e1',
  active: '#f59e0b',
  allocated: '#2563eb',
  requested: '#16a34a',
  select: '#dc2626',
};

interface Marker {
  index: number;
  kind: 'oom' | 'snapshot' | 'annotation';
  label?: string;
}

export async function renderTimeline(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d || d.events === 0) {
    c.root.append(
      el('div', {
        class: 'health ok',
        text: 'No trace events for this device: there is no timeline, only the dump (see Overview and Allocator state).',
      }),
    );
    return;
  }
  const total = d.events;
  const wrap = el('div', { class: 'timeline-view' });
  const legend = el(
    'div',
    { class: 'legend' },
    ...(['reserved', 'active', 'allocated', 'requested'] as const).map((k) =>
      el('span', {}, el('i', { style: `background:${COLORS[k]}` }), k),
    ),
    el('span', {}, el('i', { style: 'background:#dc2626' }), 'OOM'),
    el('span', {}, el('i', { style: 'background:#7c3aed' }), 'snapshot'),
    el('span', {}, el('i', { style: 'background:#0d9488' }), 'annotation'),
    el('span', { class: 'muted', text: 'wheel: zoom · drag: pan · click: select · double-click: reset' }),
  );
  const canvas = el('canvas', { class: 'chart', tabindex: 0 });
  const readout = el('div', { class: 'readout' });
  const side = el('aside', { class: 'event-side' });
  wrap.append(el('div', { class: 'chart-col' }, legend, canvas, readout), side);
  c.root.append(wrap);

  const markers: Marker[] = [];
  const mrows = await c.file.client.call<{ rows: [number, string][] }>(
    'sql',
    `SELECT t.trace_index, t.action FROM traces t JOIN devices d ON t.device_id = d.id WHERE d.device_index = ${c.device} AND t.action IN ('oom', 'snapshot') ORDER BY 1`,
    5000,
    10000,
  );
  for (const [i, a] of mrows.rows) markers.push({ index: i, kind: a as Marker['kind'] });
  // external_annotations carry wall-clock times: each is drawn at the first event at or after it.
  const arows = await c.file.client.call<{ rows: [number | null, string, string][] }>(
    'sql',
    `SELECT (SELECT MIN(t.trace_index) FROM traces t WHERE t.device_id = d.id AND t.time_us >= a.time_us), a.name, a.stage
     FROM annotations a JOIN devices d ON d.device_index = ${c.device} WHERE a.device_index IS NULL OR a.device_index = ${c.device} ORDER BY 1`,
    5000,
    10000,
  );
  for (const [i, name, stage] of arows.rows)
    if (i !== null) markers.push({ index: i, kind: 'annotation', label: `${name} ${stage}` });
  const hasTime = d.window.first_time_us !== null;
  let byTime = false;
  const axis = el('button', {
    text: 'x: events',
    title: 'switch the x axis between event index and wall-clock time',
    hidden: !hasTime,
  });
  axis.addEventListener('click', () => {
    byTime = !byTime;
    axis.textContent = byTime ? 'x: time' : 'x: events';
    draw();
  });
  legend.append(axis);

  let from = 0;
  let to = total - 1;
  let data: Timeline | null = null;
  let hover: number | null = null;
  const newest = newestOnly();
  const ctx = canvas.getContext('2d')!;
  const pad = { l: 72, r: 12, t: 10, b: 26 };

  const size = () => fitCanvas(canvas, ctx, 360);

  async function fetchData() {
    const { w } = size();
    const asked = performance.now();
    const t = await newest(
      c.file.client.call<Timeline>('timeline', c.device, from, to, Math.max(50, Math.floor(w - pad.l - pad.r))),
    );
    if (!t) return;
    const answered = performance.now();
    data = t;
    draw();
    performance.mark('snapscope:timeline-drawn', {
      detail: { engine_ms: answered - asked, draw_ms: performance.now() - answered },
    });
  }

  /** The time of event i, interpolated between bucket starts (time mode only). */
  const timeOf = (i: number): number | null => {
    if (!data || !data.time_us.length) return null;
    let k = 0;
    while (k + 1 < data.index.length && data.index[k + 1] <= i) k++;
    const t0 = data.time_us[k];
    const t1 = k + 1 < data.index.length ? data.time_us[k + 1] : data.time_us[k];
    if (t0 === null || t1 === null) return null;
    const i1 = k + 1 < data.index.length ? data.index[k + 1] : data.index[k] + 1;
    return t0 + ((t1 - t0) * (i - data.index[k])) / Math.max(1, i1 - data.index[k]);
  };
  const xOf = (i: number, w: number) => {
    if (byTime && data) {
      const [a, b, t] = [data.time_us[0], data.time_us[data.time_us.length - 1], timeOf(i)];
      if (a !== null && b !== null && t !== null && b > a) return pad.l + ((t - a) / (b - a)) * (w - pad.l - pad.r);
    }
    return pad.l + ((i - from) / Math.max(1, to - from)) * (w - pad.l - pad.r);
  };
  const iOf = (x: number, w: number) => {
    if (byTime && data) {
      // Time mode: the last bucket that starts left of x.
      let best = data.index[0];
      for (const i of data.index) {
        if (xOf(i, w) > x) break;
        best = i;
      }
      return best;
    }
    return Math.round(from + ((x - pad.l) / (w - pad.l - pad.r)) * (to - from));
  };

  function draw() {
    const { w, h } = size();
    ctx.clearRect(0, 0, w, h);
    if (!data || !data.index.length) return;
    const ymax = Math.max(...data.reserved_max, ...data.active_max, 1) * 1.05;
    const yOf = (v: number) => h - pad.b - (v / ymax) * (h - pad.t - pad.b);
    // grid + axis labels
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#64748b';
    ctx.strokeStyle = '#e2e8f0';
    for (let k = 0; k <= 4; k++) {
      const v = (ymax / 4) * k;
      const y = yOf(v);
      ctx.beginPath();
      ctx.moveTo(pad.l, y);
      ctx.lineTo(w - pad.r, y);
      ctx.stroke();
      ctx.fillText(bytes(v), 4, y + 4);
    }
    const [ta, tb] = [data.time_us[0], data.time_us[data.time_us.length - 1]];
    for (let k = 0; k <= 5; k++) {
      const x = pad.l + ((w - pad.l - pad.r) / 5) * k;
      const label =
        byTime && ta !== null && tb !== null
          ? `+${((((tb - ta) / 5) * k) / 1e3).toFixed(1)} ms`
          : int(Math.round(from + ((to - from) / 5) * k));
      ctx.fillText(label, Math.min(w - 60, Math.max(pad.l, x - 10)), h - 8);
    }
    const xs = data.index.map((i) => xOf(i, w));
    const step = xs.length > 1 ? xs[1] - xs[0] : w - pad.l - pad.r;
    // reserved as a filled area
    ctx.fillStyle = COLORS.reserved;
    ctx.beginPath();
    ctx.moveTo(xs[0], yOf(0));
    data.reserved_max.forEach((v, k) => {
      ctx.lineTo(xs[k], yOf(v));
      ctx.lineTo(xs[k] + step, yOf(v));
    });
    ctx.lineTo(xs[xs.length - 1] + step, yOf(0));
    ctx.fill();
    const line = (vals: number[], color: string, width = 1.5) => {
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.beginPath();
      vals.forEach((v, k) => {
        if (k === 0) ctx.moveTo(xs[k], yOf(v));
        else ctx.lineTo(xs[k], yOf(v));
        ctx.lineTo(xs[k] + step, yOf(v));
      });
      ctx.stroke();
    };
    line(data.active_max, COLORS.active);
    // allocated: the min..max band of each column, so no spike is lost
    ctx.fillStyle = COLORS.allocated + '55';
    data.allocated_max.forEach((v, k) =>
      ctx.fillRect(xs[k], yOf(v), Math.max(1, step), Math.max(1, yOf(data!.allocated_min[k]) - yOf(v))),
    );
    line(data.requested_max, COLORS.requested, 1);
    line(data.allocated_max, COLORS.allocated, 1.8);
    ctx.lineWidth = 1;
    for (const m of markers) {
      if (m.index < from || m.index > to) continue;
      const x = xOf(m.index, w);
      ctx.strokeStyle = m.kind === 'oom' ? '#dc2626' : m.kind === 'annotation' ? '#0d9488' : '#7c3aed';
      ctx.setLineDash(m.kind === 'oom' ? [] : [3, 3]);
      ctx.beginPath();
      ctx.moveTo(x, pad.t);
      ctx.lineTo(x, h - pad.b);
      ctx.stroke();
      ctx.setLineDash([]);
      if (m.kind === 'oom') {
        ctx.fillStyle = '#dc2626';
        ctx.fillText('OOM', x + 3, pad.t + 10);
      } else if (m.kind === 'annotation' && m.label) {
        ctx.fillStyle = '#0d9488';
        ctx.fillText(m.label, x + 3, pad.t + 22);
      }
    }
    const sel = c.event;
    if (sel !== null && sel >= from && sel <= to) {
      const x = xOf(sel, w);
      ctx.strokeStyle = COLORS.select;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x, pad.t);
      ctx.lineTo(x, h - pad.b);
      ctx.stroke();
      ctx.lineWidth = 1;
    }
    if (hover !== null) {
      const x = xOf(hover, w);
      ctx.strokeStyle = '#0f172a55';
      ctx.beginPath();
      ctx.moveTo(x, pad.t);
      ctx.lineTo(x, h - pad.b);
      ctx.stroke();
    }
  }

  function bucketAt(i: number) {
    if (!data) return -1;
    let k = 0;
    while (k + 1 < data.index.length && data.index[k + 1] <= i) k++;
    return k;
  }

  function showReadout(i: number) {
    const k = bucketAt(i);
    if (!data || k < 0) return;
    const many = k + 1 < data.index.length ? data.index[k + 1] - data.index[k] : data.to - data.index[k] + 1;
    readout.replaceChildren(
      el('b', {
        text: many > 1 ? `events ${int(data.index[k])}–${int(data.index[k] + many - 1)}` : eventLabel(data.index[k]),
      }),
      ` allocated ≤ ${bytes(data.allocated_max[k])} · active ≤ ${bytes(data.active_max[k])} · reserved ≤ ${bytes(data.reserved_max[k])} · requested ≤ ${bytes(data.requested_max[k])}`,
    );
  }

  let drag: { x: number; from: number; to: number; moved: boolean } | null = null;
  canvas.addEventListener('mousedown', (e) => (drag = { x: e.offsetX, from, to, moved: false }));
  window.addEventListener('mouseup', () => setTimeout(() => (drag = null)));
  canvas.addEventListener('mousemove', (e) => {
    const { w } = size();
    if (drag && Math.abs(e.offsetX - drag.x) > 3) {
      drag.moved = true;
      [from, to] = panBy(drag.from, drag.to, total, drag.x - e.offsetX, w - pad.l - pad.r);
      fetchData();
      return;
    }
    hover = Math.max(from, Math.min(to, iOf(e.offsetX, w)));
    showReadout(hover);
    draw();
  });
  canvas.addEventListener('mouseleave', () => {
    hover = null;
    draw();
  });
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const { w } = size();
      [from, to] = zoomAround(from, to, total, iOf(e.offsetX, w), !(e.deltaY > 0));
      fetchData();
    },
    { passive: false },
  );
  canvas.addEventListener('dblclick', () => {
    from = 0;
    to = total - 1;
    fetchData();
  });
  canvas.addEventListener('click', (e) => {
    if (drag?.moved) return;
    const { w } = size();
    const i = Math.max(0, Math.min(total - 1, iOf(e.offsetX, w)));
    c.event = i;
    draw();
    showEvent(i);
  });
  canvas.addEventListener('keydown', (e) => {
    if (c.event === null) return;
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      c.event = Math.max(0, Math.min(total - 1, c.event + (e.key === 'ArrowRight' ? 1 : -1)));
      draw();
      showEvent(c.event);
    }
  });

  async function showEvent(i: number) {
    const detail = await c.file.client.call<EventDetail>('event', c.device, i);
    side.replaceChildren(eventPanel(detail, c));
    c.app.setEvent(i);
  }

  new ResizeObserver(() => fetchData()).observe(canvas);
  await fetchData();
  if (c.event !== null) {
    // Centre the selected event when it was chosen elsewhere.
    if (total > 4000) {
      const span = Math.max(2000, Math.round(total / 20));
      from = Math.max(0, c.event - span / 2);
      to = Math.min(total - 1, from + span);
      await fetchData();
    }
    await showEvent(c.event);
  } else {
    side.replaceChildren(
      el('p', {
        class: 'muted',
        text: 'Click the chart to select an event: its stack, counters and block lifetime appear here, and the memory tree and allocator state follow it.',
      }),
    );
  }
}
