// Allocations: live blocks stacked over time (memory_viz's Active Memory Timeline, on canvas). The
// engine lays out the N largest blocks per pixel column; the rest is one grey band, so every
// column still adds up to the active bytes. Wheel zooms, drag pans, hover names the block, click
// selects its allocation event. Geometry: ./allocations-layout; drawing: ./allocations-draw.
import type { ViewContext } from '../app-types';
import type { BandBlock } from '../generated/answers';
import { bytes, el, eventLabel, exact, hex, int } from '../ui/format';
import { fitCanvas } from '../ui/canvas';
import { plotWidth, type Frame } from '../ui/plot';
import { tooltip } from '../ui/tooltip';
import { newestOnly } from '../ui/window';
import { panZoom } from '../ui/zoom';
import { drawBands } from './allocations-draw';
import { computing } from '../ui/busy';
import { PAD, bandAt, bandScale, eventNear, type BandsData } from './allocations-layout';

function blockTip(b: BandBlock | null): (Node | string)[] {
  if (!b)
    return [
      el('b', { text: 'smaller blocks, summed' }),
      el('div', { text: 'raise the detail to draw more blocks one by one' }),
    ];
  const born = b.alloc_event === null ? 'before the window' : eventLabel(b.alloc_event);
  const end = b.free_event === null ? 'alive at the dump' : 'freed at ' + eventLabel(b.free_event);
  return [
    el('b', { text: `${bytes(b.size)} at ${hex(b.address)}` }),
    el('div', { text: `${exact(b.size)} · allocated ${b.alloc_event === null ? born : 'at ' + born}, ${end}` }),
    el('div', { class: 'loc', text: b.site || 'no stack recorded' }),
    b.alloc_event !== null ? el('div', { class: 'muted', text: 'click: select its allocation event' }) : '',
  ];
}

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
    ...[1000, 3000, 10000].map((n) =>
      el('option', { value: n, text: `${int(n)} largest blocks`, selected: n === 3000 }),
    ),
  );
  const canvas = el('canvas', { class: 'chart' });
  const tip = tooltip(canvas);
  const info = el('div', { class: 'readout' });
  const selection = el('div', { class: 'readout selection' });
  c.root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('b', { text: 'Live allocations, stacked in allocation order' }),
      el('span', { class: 'spacer' }),
      el('span', { class: 'muted', text: 'wheel: zoom · drag: pan · click: select' }),
      detail,
    ),
    el('div', { class: 'segmap-box' }, canvas, tip.el),
    info,
    selection,
  );
  const g = canvas.getContext('2d')!;
  let from = 0;
  let to = total - 1;
  let data: BandsData | null = null;
  /** The chart's CSS size at the last draw. */
  let size = '';
  const newest = newestOnly();
  const frame = (): Frame => ({ ...fitCanvas(canvas, g, 420), pad: PAD });

  /** Fetch the window's layout; `busy` covers the chart meanwhile (not while panning). */
  async function fetchData(busy = false) {
    const f = frame();
    const cols = Math.max(50, Math.floor(plotWidth(f)));
    const asked = performance.now();
    // Painted by the worker for this frame: the page's thread only copies the pixels.
    const paint = { frame: f, ratio: g.getTransform().a || 1 };
    const ask = c.file.client.bandsPainted(paint, c.device, from, to, cols, Number(detail.value));
    const b = await newest(busy ? computing(c.root, ask) : ask);
    if (!b) return;
    const answered = performance.now();
    data = b;
    const painted = data.painted;
    draw();
    performance.mark('snapscope:allocations-drawn', {
      detail: {
        engine_ms: answered - asked,
        draw_ms: performance.now() - answered,
        entries: b.entry_block.length,
        // The worker's pixels fitted the chart (not painted again on the page's thread).
        worker_painted: painted !== undefined && data.painted === painted,
        // Of engine_ms, the worker's bands and painting (the rest: waiting for it, and the transfer).
        worker_ms: (b as { worker_ms?: unknown }).worker_ms,
      },
    });
  }

  function draw() {
    if (!data) return;
    size = `${canvas.clientWidth}x${canvas.clientHeight}`;
    const f = frame();
    drawBands(g, data, bandScale(data, f), f, c.event);
    info.textContent = `events ${int(data.from)}–${int(data.to)} · ${int(data.blocks.length)} blocks drawn one by one; grey = all smaller blocks summed`;
  }

  /** The block under the pointer: a block, null for the summed rest, undefined for nothing. */
  function hit(x: number, y: number): BandBlock | null | undefined {
    if (!data) return undefined;
    const f = frame();
    const r = bandAt(data, bandScale(data, f), f, x, y);
    return r ? (r.block === null ? null : data.blocks[r.block]) : undefined;
  }

  /** Select event `e` (here: the chart marks it; the other views follow) without leaving the view. */
  function pick(e: number, b?: BandBlock) {
    c.event = e;
    c.app.setEvent(e);
    draw();
    const open = el('a', { href: '#', text: 'open in Timeline' });
    open.addEventListener('click', (ev) => {
      ev.preventDefault();
      c.app.select(e, 'timeline');
    });
    selection.replaceChildren(
      el('b', { text: `Selected ${eventLabel(e)}` }),
      b ? ` (allocation of ${bytes(b.size)} at ${hex(b.address)}) · ` : ' · ',
      open,
    );
  }
  if (c.event !== null) pick(c.event);

  const pz = panZoom(canvas, {
    total,
    window: () => [from, to],
    plotWidth: () => plotWidth(frame()),
    eventAt: (x) => {
      const f = frame();
      return data ? eventNear(data, bandScale(data, f), f, x) : null;
    },
    change: (a, b) => {
      [from, to] = [a, b];
      void fetchData();
    },
  });
  canvas.addEventListener('mousemove', (e) => {
    if (pz.moved()) return;
    const b = hit(e.offsetX, e.offsetY);
    if (b === undefined) tip.hide();
    else tip.show(e, ...blockTip(b));
  });
  canvas.addEventListener('click', (e) => {
    if (pz.moved()) return;
    const b = hit(e.offsetX, e.offsetY);
    if (b && b.alloc_event !== null) pick(b.alloc_event, b);
  });
  detail.addEventListener('change', () => {
    // The card named a block of the old layout.
    tip.hide();
    void fetchData(true);
  });
  // Redrawn when the chart's size changes while it is on the page (not when it is taken off).
  new ResizeObserver(() => {
    const now = `${canvas.clientWidth}x${canvas.clientHeight}`;
    if (!canvas.isConnected || now === size) return;
    size = now;
    draw();
  }).observe(canvas);
  await fetchData(true);
}
