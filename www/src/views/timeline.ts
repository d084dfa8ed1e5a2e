// Timeline: allocated / active / reserved / requested over the event index, drawn on a canvas from
// min/max buckets the engine computes for the visible window (one column per pixel, so millions
// of events pan and zoom at the cost of a few thousand points). Wheel zooms, drag pans, a click
// selects the event under the cursor. Geometry: ./timeline-layout; drawing: ./timeline-draw.
import type { ViewContext } from '../app-types';
import type { CategorySeries, Timeline } from '../generated/answers';
import { bytesSpan, clip, duration, el, eventLabel, int } from '../ui/format';
import { fitCanvas, onResize } from '../ui/canvas';
import { plotWidth, type Frame } from '../ui/plot';
import { newestOnly } from '../ui/window';
import { panZoom } from '../ui/zoom';
import { eventPanel, peakButton } from '../ui/event-panel';
import { computing } from '../ui/busy';
import { categoryColor } from '../ui/categories-palette';
import { COLORS, PHASE_COLORS, RANGE_COLORS, STEP_LINE, drawBands, drawTimeline, type Marker } from './timeline-draw';
import { PAD, bucketAt, bucketEvents, centredWindow, flatNote, stackColumns, timeOf, xScale } from './timeline-layout';
import {
  bandAt,
  bandsHeight,
  isFramework,
  layoutBands,
  spanName,
  stepBoundaries,
  type Band,
  type BandLayout,
} from './phases-layout';

/** Time buckets for the annotation markers: about a pixel each on a wide chart. */
const ANNOTATION_BUCKETS = 1000;

/**
 * OOM and snapshot events, and external annotations at the first event at or after their time
 * (framework-internal ones left out: they are in the phase bands, on request).
 */
async function loadMarkers(c: ViewContext): Promise<Marker[]> {
  const markers: Marker[] = [];
  // Annotations come summarised into at most ANNOTATION_BUCKETS time buckets (the first of each
  // named, with its count): a snapshot may carry 10^6 of them.
  const m = await c.file.client.call('timelineMarkers', c.device, ANNOTATION_BUCKETS);
  for (const { index, action } of m.events)
    markers.push({ index, kind: action as Marker['kind'], label: action === 'oom' ? 'OOM' : 'snapshot' });
  for (const a of m.annotations)
    markers.push({
      index: a.index,
      kind: 'annotation',
      label: clip(`${a.name} ${a.stage}`, 200) + (a.count > 1 ? ` ×${int(a.count)}` : ''),
      count: a.count,
    });
  // The peaks (a peak at the window start, before any event, stands at event 0).
  const p = c.deviceOverview?.peaks;
  if (p) {
    markers.push({ index: p.allocated.event ?? 0, kind: 'peak', label: 'allocated peak' });
    if (p.reserved.event !== p.allocated.event)
      markers.push({ index: p.reserved.event ?? 0, kind: 'reservedPeak', label: 'reserved peak' });
  }
  return markers;
}

const MARKER_NAMES: Record<Marker['kind'], string> = {
  peak: 'allocated peak',
  reservedPeak: 'reserved peak',
  oom: 'OOM',
  snapshot: 'snapshot',
  annotation: 'annotation',
};

/** The series, and only the markers this device has. */
function legend(markers: Marker[]) {
  const kinds = (Object.keys(MARKER_NAMES) as Marker['kind'][]).filter((k) => markers.some((m) => m.kind === k));
  const count = (k: Marker['kind']) => markers.reduce((n, m) => n + (m.kind === k ? (m.count ?? 1) : 0), 0);
  return el(
    'div',
    { class: 'legend' },
    ...(['reserved', 'active', 'allocated', 'requested'] as const).map((k) =>
      el('span', { 'data-series': k }, el('i', { style: `background:${COLORS[k]}` }), k),
    ),
    ...kinds.map((k) =>
      el(
        'span',
        {},
        el('i', { style: `background:${COLORS[k]}` }),
        count(k) > 1 ? `${MARKER_NAMES[k]} (${int(count(k))})` : MARKER_NAMES[k],
      ),
    ),
    el('span', { class: 'muted', text: 'wheel: zoom · drag: pan · click: select · double-click: reset' }),
  );
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
  const [markers, phases] = await Promise.all([loadMarkers(c), c.file.client.analyze('steps', c.device, 'dump')]);
  const head = legend(markers);
  const canvas = el('canvas', { class: 'chart', tabindex: 0 });
  const readout = el('div', { class: 'readout' });
  const side = el('aside', { class: 'event-side' });
  // Phase bands under the chart: runs, then the named ranges (framework ranges on request).
  const bandCanvas = el('canvas', { class: 'phase-bands' });
  const bandLegend = el('div', { class: 'legend band-legend' });
  const catLegend = el('div', { class: 'legend category-legend', hidden: true });
  const flat = el('div', { class: 'health info flat-note', hidden: true });
  const chartBox = el(
    'div',
    { class: 'chart-col', style: 'position:relative' },
    head,
    flat,
    catLegend,
    canvas,
    bandCanvas,
    bandLegend,
    readout,
  );
  c.root.append(el('div', { class: 'timeline-view' }, chartBox, side));
  let showFramework = false;
  const frameworkCount = phases.phases.filter(isFramework).length;
  const frameworkToggle = el('button', {
    class: 'framework-toggle',
    text: `show ${int(frameworkCount)} framework range${frameworkCount === 1 ? '' : 's'}`,
    hidden: frameworkCount === 0,
  });
  frameworkToggle.addEventListener('click', () => {
    showFramework = !showFramework;
    frameworkToggle.textContent = `${showFramework ? 'hide' : 'show'} ${int(frameworkCount)} framework range${frameworkCount === 1 ? '' : 's'}`;
    draw();
  });
  let bands: BandLayout = { bands: [], rows: 0, hidden: 0 };
  let bandHover: Band | null = null;

  let stacked = false;
  let series: CategorySeries | null = null;
  const stackToggle = el('button', {
    class: 'stack-toggle',
    text: 'stack by category',
    title: 'draw the active memory as stacked areas by category (see Categories)',
    'aria-pressed': 'false',
  });
  stackToggle.addEventListener('click', () => {
    stacked = !stacked;
    stackToggle.setAttribute('aria-pressed', String(stacked));
    stackToggle.classList.toggle('on', stacked);
    // Stacked, the chart draws reserved, the categories and the active line only.
    for (const k of ['allocated', 'requested'])
      head.querySelector<HTMLElement>(`[data-series=${k}]`)?.toggleAttribute('hidden', stacked);
    if (!stacked) {
      series = null;
      catLegend.hidden = true;
      draw();
    } else void fetchData();
  });
  head.append(stackToggle);

  let byTime = false;
  const axis = el('button', {
    text: 'x: events',
    title: 'switch the x axis between event index and wall-clock time',
    hidden: d.window.first_time_us === null,
  });
  axis.addEventListener('click', () => {
    byTime = !byTime;
    axis.textContent = byTime ? 'x: time' : 'x: events';
    draw();
  });
  head.append(axis);

  let from = 0;
  let to = total - 1;
  if (c.range) [from, to] = [Math.max(0, c.range[0]), Math.min(total - 1, Math.max(c.range[0], c.range[1]))];
  let data: Timeline | null = null;
  let hover: number | null = null;
  const newest = newestOnly();
  const g = canvas.getContext('2d')!;
  const frame = (): Frame => ({ ...fitCanvas(canvas, g, 360), pad: PAD });
  const scale = (f = frame()) => xScale(data, from, to, f, byTime);

  async function fetchData() {
    const asked = performance.now();
    const columns = Math.max(50, Math.floor(plotWidth(frame())));
    const answer = await newest(
      computing(
        chartBox,
        Promise.all([
          c.file.client.call('timeline', c.device, from, to, columns),
          stacked
            ? c.file.client.call('categorySeries', c.device, from, to, Math.max(25, columns >> 1))
            : Promise.resolve(null),
        ]),
      ),
    );
    if (!answer) return;
    const answered = performance.now();
    const [t, cs] = answer;
    data = t;
    // Over the whole trace, say why the chart is flat when it is (one event, nothing moving).
    const note = t.from === 0 && t.to === total - 1 ? flatNote(t, total, d!.window.blocks_before_window) : null;
    flat.hidden = note === null;
    flat.textContent = note ?? '';
    series = stacked ? cs : null;
    if (series) {
      catLegend.hidden = false;
      catLegend.replaceChildren(
        el('span', {}, el('i', { class: 'active-line' }), 'active (the top of the stack), by category:'),
        ...series.categories.map((n) => el('span', {}, el('i', { style: `background:${categoryColor(n)}` }), n)),
      );
    }
    draw();
    performance.mark('snapscope:timeline-drawn', {
      detail: { engine_ms: answered - asked, draw_ms: performance.now() - answered },
    });
  }

  const bg = bandCanvas.getContext('2d')!;
  const steps = () => stepBoundaries(phases.steps, from, to);

  function draw() {
    if (!data) return;
    const f = frame();
    const x = scale(f);
    drawTimeline(g, {
      data,
      frame: f,
      x,
      from,
      to,
      byTime,
      origin: d!.window.first_time_us,
      markers,
      selected: c.event,
      hover,
      steps: steps(),
      stack: series ? { columns: stackColumns(series, from, to, x.xOf), names: series.categories } : null,
    });
    drawPhaseBands(f);
  }

  function drawPhaseBands(chart: Frame) {
    bg.font = '11px system-ui, sans-serif';
    const x = scale(chart);
    bands = layoutBands(
      phases.phases,
      from,
      to,
      x.xOf,
      PAD.l,
      chart.w - PAD.r,
      (t) => bg.measureText(t).width,
      showFramework,
    );
    const h = bandsHeight(bands.rows);
    bandCanvas.hidden = h === 0;
    if (h) {
      const bf: Frame = { ...fitCanvas(bandCanvas, bg, h, h), pad: PAD };
      drawBands(
        bg,
        bf,
        bands,
        steps(),
        x,
        c.event !== null && c.event >= from && c.event <= to ? c.event : null,
        bandHover,
      );
    }
    const runs = [...new Set(bands.bands.filter((b) => b.row === 0).map((b) => b.span.name))];
    const groups = [...new Set(bands.bands.filter((b) => b.row > 0).map((b) => b.span.group))];
    bandLegend.replaceChildren(
      ...(phases.phases.length
        ? [
            ...runs.map((n) => el('span', {}, el('i', { style: `background:${PHASE_COLORS[n] ?? '#e2e8f0'}` }), n)),
            ...groups.map((grp) =>
              el('span', {}, el('i', { style: `background:${RANGE_COLORS[grp] ?? '#e2e8f0'}` }), `${grp} range`),
            ),
            steps().length
              ? el('span', {}, el('i', { class: 'step-line', style: `background:${STEP_LINE}` }), 'step start')
              : '',
            bands.hidden ? el('span', { class: 'muted', text: `${int(bands.hidden)} more ranges (zoom in)` }) : '',
            bands.rows ? el('span', { class: 'muted', text: 'click a band: zoom to it' }) : '',
            bands.rows ? '' : el('span', { class: 'muted', text: 'no phase or range in this window' }),
          ]
        : [el('span', { class: 'muted', text: 'No phases or named ranges were found in this trace.' })]),
      frameworkToggle,
    );
  }

  function showReadout(i: number) {
    const t = data;
    const k = t ? bucketAt(t.index, i) : -1;
    if (!t || k < 0) return;
    const [first, last] = bucketEvents(t, k);
    const at = timeOf(t, first);
    const t0 = d!.window.first_time_us;
    // The markers in this column (annotations are grouped on the chart: here they are named).
    const here = markers.filter((m) => m.index >= first && m.index <= last).map((m) => m.label ?? m.kind);
    readout.replaceChildren(
      el('b', { text: last > first ? `events ${int(first)}–${int(last)}` : eventLabel(first) }),
      at !== null && t0 !== null ? ` at ${duration(at - t0)} ·` : '',
      ...(['allocated', 'active', 'reserved', 'requested'] as const).flatMap((name, n) => [
        `${n ? ' ·' : ''} ${name} ≤ `,
        bytesSpan(t[`${name}_max`][k]),
      ]),
      here.length
        ? el('div', {
            class: 'muted',
            text: here.slice(0, 6).join(' · ') + (here.length > 6 ? ` · +${here.length - 6}` : ''),
          })
        : '',
    );
  }

  const peakEvent = d.peaks.allocated.event;
  const toPeak = peakEvent === null ? undefined : () => select(peakEvent, true);

  async function showEvent(i: number) {
    const detail = await c.file.client.call('event', c.device, i);
    side.replaceChildren(eventPanel(detail, c, toPeak));
    c.app.setEvent(i);
  }

  const clamp = (i: number) => Math.max(0, Math.min(total - 1, i));
  /** Select event i; `reveal` brings it into the window when it lies outside. */
  function select(i: number, reveal = false) {
    c.event = clamp(i);
    if (reveal && (c.event < from || c.event > to)) {
      [from, to] = centredWindow(c.event, total, to - from);
      void fetchData();
    }
    draw();
    void showEvent(c.event);
  }
  const pz = panZoom(canvas, {
    total,
    window: () => [from, to],
    plotWidth: () => plotWidth(frame()),
    eventAt: (x) => scale().iOf(x),
    change: (a, b) => {
      [from, to] = [a, b];
      void fetchData();
    },
  });
  canvas.addEventListener('mousemove', (e) => {
    if (pz.moved()) return;
    hover = Math.max(from, Math.min(to, scale().iOf(e.offsetX)));
    showReadout(hover);
    draw();
  });
  canvas.addEventListener('mouseleave', () => {
    hover = null;
    draw();
  });
  canvas.addEventListener('click', (e) => {
    if (!pz.moved()) select(scale().iOf(e.offsetX));
  });
  canvas.addEventListener('keydown', (e) => {
    if (c.event !== null && (e.key === 'ArrowRight' || e.key === 'ArrowLeft'))
      select(c.event + (e.key === 'ArrowRight' ? 1 : -1));
  });

  bandCanvas.addEventListener('mousemove', (e) => {
    const b = bandAt(bands, e.offsetX, e.offsetY);
    if (b !== bandHover) {
      bandHover = b;
      draw();
    }
    bandCanvas.style.cursor = b ? 'zoom-in' : 'default';
    bandCanvas.title = b
      ? `${spanName(b.span)} (${b.span.kind === 'run' ? 'phase' : `${b.span.group} range`}): events ${int(b.span.start_event ?? 0)}–${int(b.span.end_event ?? 0)}\nclick to zoom to it`
      : '';
  });
  bandCanvas.addEventListener('mouseleave', () => {
    bandHover = null;
    draw();
  });
  bandCanvas.addEventListener('click', (e) => {
    const b = bandAt(bands, e.offsetX, e.offsetY);
    if (!b || b.span.start_event === null || b.span.end_event === null) return;
    // At least a few events wide, so that a two-event run still draws as a window.
    const lo = Math.max(0, b.span.start_event);
    const hi = Math.min(total - 1, Math.max(b.span.end_event, lo + 4));
    [from, to] = [lo, hi];
    void fetchData();
  });

  onResize(canvas, () => void fetchData());
  await fetchData();
  if (c.event !== null) {
    // Centre the selected event when it was chosen elsewhere.
    if (total > 4000 && !c.range) {
      [from, to] = centredWindow(c.event, total, Math.max(2000, Math.round(total / 20)));
      await fetchData();
    }
    await showEvent(c.event);
  } else {
    side.replaceChildren(
      el('p', {
        class: 'muted',
        text: 'Click the chart to select an event: its stack, counters and block lifetime appear here, and the memory tree and allocator state follow it.',
      }),
      el('div', { class: 'actions' }, peakButton(toPeak)),
    );
  }
}
