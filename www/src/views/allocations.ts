// Allocations: live blocks stacked over time (memory_viz's Active Memory Timeline, on canvas). The
// engine lays out the N largest blocks per pixel column; the rest is one grey band, so every
// column still adds up to the active bytes. Wheel zooms, drag pans, hover names the block, click
// selects its allocation event.
import type { ViewContext } from './index';
import { bytes, el, eventLabel, exact, hex, int } from '../ui/format';
import { fitCanvas } from '../ui/canvas';
import { newestOnly, panBy, zoomAround } from '../ui/window';

interface BandBlock {
  lifetime: number;
  address: number;
  size: number;
  alloc_event: number | null;
  free_event: number | null;
  stack: number | null;
  site: string;
}
interface Bands {
  from: number;
  to: number;
  column_event: number[];
  column_start: number[];
  entry_block: number[];
  entry_bottom: number[];
  other_bytes: number[];
  active: number[];
  blocks: BandBlock[];
}

const hue = (n: number) => (n * 137.508) % 360;

export async function renderAllocations(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d || d.events === 0) {
    c.root.append(
      el('div', { class: 'health ok', text: 'No trace events for this device: nothing to stack over time.' }),
    );
    return;
  }
  const total = d.events;
  const detail = el(
    'select',
    {},
    ...[200, 1000, 3000].map((n) => el('option', { value: n, text: `${n} largest blocks`, selected: n === 1000 })),
  );
  const canvas = el('canvas', { class: 'chart' });
  const tip = el('div', { class: 'tip', hidden: true });
  const info = el('div', { class: 'readout' });
  c.root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('b', { text: 'Live allocations, stacked in allocation order' }),
      el('span', { class: 'spacer' }),
      el('span', { class: 'muted', text: 'wheel: zoom · drag: pan · click: select' }),
      detail,
    ),
    el('div', { class: 'segmap-box' }, canvas, tip),
    info,
  );
  const g = canvas.getContext('2d')!;
  const pad = { l: 72, r: 12, t: 8, b: 22 };
  let from = 0;
  let to = total - 1;
  let data: Bands | null = null;
  const newest = newestOnly();

  const size = () => fitCanvas(canvas, g, 420);

  async function fetchData() {
    const { w } = size();
    const b = await newest(
      c.file.client.call<Bands>(
        'bands',
        c.device,
        from,
        to,
        Math.max(50, Math.floor(w - pad.l - pad.r)),
        Number(detail.value),
      ),
    );
    if (!b) return;
    data = b;
    draw();
  }

  function geometry() {
    const { w, h } = size();
    const cols = data!.column_event.length;
    const ymax = Math.max(1, ...data!.active) * 1.05;
    const colW = (w - pad.l - pad.r) / cols;
    const yOf = (v: number) => h - pad.b - (v / ymax) * (h - pad.t - pad.b);
    return { w, h, cols, ymax, colW, yOf };
  }

  function draw() {
    if (!data) return;
    const { w, h, cols, ymax, colW, yOf } = geometry();
    g.clearRect(0, 0, w, h);
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#64748b';
    for (let k = 0; k <= 4; k++) g.fillText(bytes((ymax / 4) * k), 4, yOf((ymax / 4) * k) + 4);
    for (let k = 0; k <= 5; k++) {
      const col = Math.min(cols - 1, Math.floor(((cols - 1) / 5) * k));
      g.fillText(int(data.column_event[col]), pad.l + col * colW, h - 6);
    }
    for (let col = 0; col < cols; col++) {
      const x = pad.l + col * colW;
      let top = 0;
      for (let e = data.column_start[col]; e < data.column_start[col + 1]; e++) {
        const blk = data.blocks[data.entry_block[e]];
        const bottom = data.entry_bottom[e];
        g.fillStyle = blk.stack === null ? '#94a3b8' : `hsl(${hue(blk.stack)} 65% 58%)`;
        g.fillRect(x, yOf(bottom + blk.size), Math.max(1, colW), Math.max(0.5, yOf(bottom) - yOf(bottom + blk.size)));
        top = bottom + blk.size;
      }
      if (data.other_bytes[col] > 0) {
        g.fillStyle = '#cbd5e1';
        g.fillRect(
          x,
          yOf(top + data.other_bytes[col]),
          Math.max(1, colW),
          Math.max(0.5, yOf(top) - yOf(top + data.other_bytes[col])),
        );
      }
    }
    info.textContent = `events ${int(data.from)}–${int(data.to)} · ${int(data.blocks.length)} blocks drawn one by one; grey = all smaller blocks summed`;
  }

  function hit(x: number, y: number): BandBlock | 'other' | null {
    if (!data) return null;
    const { cols, colW, yOf } = geometry();
    const col = Math.floor((x - pad.l) / colW);
    if (col < 0 || col >= cols) return null;
    let top = 0;
    for (let e = data.column_start[col]; e < data.column_start[col + 1]; e++) {
      const blk = data.blocks[data.entry_block[e]];
      const bottom = data.entry_bottom[e];
      if (y <= yOf(bottom) && y >= yOf(bottom + blk.size)) return blk;
      top = bottom + blk.size;
    }
    return y <= yOf(top) && y >= yOf(top + data.other_bytes[col]) ? 'other' : null;
  }

  let drag: { x: number; from: number; to: number; moved: boolean } | null = null;
  canvas.addEventListener('mousedown', (e) => (drag = { x: e.offsetX, from, to, moved: false }));
  window.addEventListener('mouseup', () => setTimeout(() => (drag = null)));
  canvas.addEventListener('mousemove', (e) => {
    if (drag && Math.abs(e.offsetX - drag.x) > 3 && data) {
      drag.moved = true;
      [from, to] = panBy(drag.from, drag.to, total, drag.x - e.offsetX, canvas.clientWidth - pad.l - pad.r);
      void fetchData();
      return;
    }
    const b = hit(e.offsetX, e.offsetY);
    if (!b) {
      tip.hidden = true;
      return;
    }
    tip.hidden = false;
    tip.style.left = `${Math.min(e.offsetX + 14, canvas.clientWidth - 320)}px`;
    tip.style.top = `${e.offsetY + 16}px`;
    tip.replaceChildren(
      ...(b === 'other'
        ? [
            el('b', { text: 'smaller blocks, summed' }),
            el('div', { text: 'raise the detail to draw more blocks one by one' }),
          ]
        : [
            el('b', { text: `${bytes(b.size)} at ${hex(b.address)}` }),
            el('div', {
              text: `${exact(b.size)} · allocated at ${b.alloc_event === null ? 'before the window' : eventLabel(b.alloc_event)}, ${b.free_event === null ? 'alive at the dump' : 'freed at ' + eventLabel(b.free_event)}`,
            }),
            el('div', { class: 'loc', text: b.site || 'no stack recorded' }),
          ]),
    );
  });
  canvas.addEventListener('mouseleave', () => (tip.hidden = true));
  canvas.addEventListener('click', (e) => {
    if (drag?.moved) return;
    const b = hit(e.offsetX, e.offsetY);
    if (b && b !== 'other' && b.alloc_event !== null) c.app.select(b.alloc_event, 'timeline');
  });
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      if (!data) return;
      const { colW, cols } = geometry();
      const col = Math.max(0, Math.min(cols - 1, Math.floor((e.offsetX - pad.l) / colW)));
      [from, to] = zoomAround(from, to, total, data.column_event[col], !(e.deltaY > 0));
      void fetchData();
    },
    { passive: false },
  );
  canvas.addEventListener('dblclick', () => {
    from = 0;
    to = total - 1;
    void fetchData();
  });
  detail.addEventListener('change', () => void fetchData());
  new ResizeObserver(() => draw()).observe(canvas);
  await fetchData();
}
