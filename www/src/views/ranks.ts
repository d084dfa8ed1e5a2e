// Ranks: a whole distributed run, one snapshot per rank. Each file was read by an engine,
// summarized (`rankSummary`) and closed; the engine combined the summaries (`combineRanks`, the
// same JSON as `snapscope ranks --json`): per rank the peaks, the spread, the outliers and why the
// worst rank differs from the median one. A bar or a row opens that rank's file in the other
// views; "Compare with the median rank" opens both in Compare.
import type { RanksContext } from '../app-types';
import type { RankAt, RanksReport, SiteDelta } from '../generated/answers';
import { byteAxis, fitCanvas, fitText } from '../ui/canvas';
import { bytes, bytesSpan, clip, el, exact, gridTable, int, plural } from '../ui/format';
import { byteTicks, yScaleTo, type Frame } from '../ui/plot';
import { tooltip } from '../ui/tooltip';
import { categoryColor } from '../ui/categories-palette';
import {
  RANKS_PAD,
  barAt,
  barCentre,
  barGeometry,
  chartWidth,
  imbalanceText,
  labelStep,
  manyDevices,
  nameAt,
  outlierText,
  peakAt,
  placeLabels,
  rankSpans,
  rankUnits,
  signedBytes,
  unitName,
  type RankUnit,
} from './ranks-layout';

export const RANK_COLORS = {
  reserved: '#cbd5e1',
  allocated: '#2563eb',
  outlier: '#dc2626',
  median: '#0f172a',
  hover: '#e2e8f0',
};

/** A link that opens a rank's file. */
function rankLink(c: RanksContext, file: number, text: string, device?: number): HTMLElement {
  const a = el('a', { href: '#', class: 'rank-link', text, title: 'open this rank in the other views' });
  a.addEventListener('click', (e) => {
    e.preventDefault();
    void c.app.openRank(file, device);
  });
  return a;
}

const fileIndex = (r: RanksReport, name: string) => r.files.findIndex((f) => f.file === name);

/** "406.00 MiB rank 7": a figure and the rank it is at. */
function atCell(c: RanksContext, at: RankAt | null, units: RankUnit[]): HTMLElement {
  if (!at) return el('td', { class: 'num', text: '—' });
  const i = fileIndex(c.run.report, at.file);
  const name = nameAt(units, at.file, at.rank, at.device);
  return el(
    'td',
    { class: 'num' },
    bytesSpan(at.bytes),
    ' ',
    el('span', { class: 'muted' }, i >= 0 ? rankLink(c, i, name, at.device) : name),
  );
}

function figures(c: RanksContext, units: RankUnit[]): HTMLElement {
  const s = c.run.report.summary;
  const row = (label: string, key: 'allocated' | 'reserved', title: string) =>
    el(
      'tr',
      { 'data-figure': key },
      el('th', { class: 'defined', title, text: label }),
      atCell(c, s.max[key], units),
      atCell(c, s.median[key], units),
      atCell(c, s.min[key], units),
      el('td', { class: 'num imbalance', text: imbalanceText(s.imbalance[key]) }),
    );
  return gridTable(
    ['', 'max', 'median', 'min', 'imbalance (max / median)'],
    [
      row('peak allocated', 'allocated', "the most memory handed out to tensors at once on each rank's device"),
      row(
        'peak reserved',
        'reserved',
        'the most memory the caching allocator held from the device at once (what nvidia-smi shows, roughly)',
      ),
    ],
    'grid ranks-figures',
  );
}

function outliers(c: RanksContext, units: RankUnit[]): HTMLElement {
  const s = c.run.report.summary;
  const rule = el(
    'p',
    { class: 'muted outlier-rule' },
    el('b', { text: 'Outlier rule: ' }),
    `a rank's peak allocated is an outlier when its ${s.outlier_rule}. `,
    'MAD is the median of the distances to the median: a spread that a few extreme ranks cannot inflate.',
  );
  if (!s.outliers.length)
    return el(
      'div',
      { class: 'ranks-outliers' },
      el('p', { text: "No outlier: every rank's peak allocated is close to the median." }),
      rule,
    );
  const items = s.outliers.map((o) => {
    const i = fileIndex(c.run.report, o.file);
    const name = nameAt(units, o.file, o.rank, o.device);
    return el(
      'li',
      { 'data-rank': o.rank, 'data-device': o.device },
      i >= 0 ? rankLink(c, i, name, o.device) : name,
      ' ',
      el('span', { class: o.above_median > 0 ? 'worse' : 'better-muted', text: bytes(o.bytes) }),
      el('span', { class: 'muted', text: ` ${outlierText(o)}` }),
    );
  });
  return el(
    'div',
    { class: 'ranks-outliers' },
    el('b', { text: `${plural(s.outliers.length, 'outlier')} (farthest from the median first):` }),
    el('ul', { class: 'outlier-list' }, ...items),
    rule,
  );
}

function deltaRow(d: SiteDelta, category: boolean): HTMLElement {
  return el(
    'tr',
    { 'data-label': clip(d.label, 500) },
    el(
      'td',
      { class: category ? 'cat' : 'site', title: category ? undefined : d.label },
      category ? el('i', { class: 'swatch', style: `background:${categoryColor(d.label)}` }) : '',
      clip(d.label, 400),
    ),
    el('td', { class: 'num' }, bytesSpan(d.worst)),
    el('td', { class: 'num' }, bytesSpan(d.median)),
    el('td', { class: `num ${d.delta > 0 ? 'worse' : 'better'}`, title: exact(d.delta), text: signedBytes(d.delta) }),
  );
}

/**
 * The worst rank's sentence with its buttons (first), and its sites and categories against the
 * median rank (after the figures).
 */
function worstSection(c: RanksContext, units: RankUnit[]): { box: HTMLElement[]; details: HTMLElement[] } {
  const w = c.run.report.summary.worst;
  if (!w) {
    const n = c.run.report.summary.ranks;
    const text =
      n === 1
        ? 'Only one rank could be read: there is no other to compare it with.'
        : 'No rank could be read: see the files below.';
    return { box: [el('div', { class: 'health info ranks-worst', text })], details: [] };
  }
  const wi = fileIndex(c.run.report, w.file);
  const worstName = nameAt(units, w.file, w.rank, w.device);
  const open = el('button', { class: 'open-worst', text: `Open ${worstName}` });
  open.addEventListener('click', () => void c.app.openRank(wi, w.device));
  const compare = el('button', {
    class: 'primary compare-median',
    text: 'Compare with the median rank',
    title: `open rank ${w.rank} and the median rank ${w.median_rank} side by side in Compare`,
  });
  compare.addEventListener('click', () => {
    compare.disabled = true;
    c.app.compareWithMedian().finally(() => (compare.disabled = false));
  });
  const sentence = w.sentence.charAt(0).toUpperCase() + w.sentence.slice(1);
  const box = [
    el(
      'div',
      {
        class: `health ${w.excess_bytes > 0 && c.run.report.summary.outliers.length ? 'warn' : 'info'} ranks-worst`,
        'data-rank': w.rank,
        'data-excess': w.excess_bytes,
      },
      el('div', { class: 'worst-sentence', text: sentence }),
      el('div', { class: 'actions' }, compare, open),
    ),
  ];
  const h = `rank ${w.rank}`;
  const m = `median rank ${w.median_rank}`;
  const out: HTMLElement[] = [];
  out.push(
    el('h3', { text: `Why rank ${w.rank} differs from the median rank ${w.median_rank}` }),
    el('p', {
      class: 'muted',
      text: `Memory held at each rank's allocated peak, largest difference first, more and less: the rows sum to the difference of the peaks (${signedBytes(w.excess_bytes)}).`,
    }),
  );
  out.push(
    w.top_sites.length
      ? gridTable(
          ['allocation site (the frame that names the stack · the library frame below it)', h, m, 'difference'],
          w.top_sites.map((d) => deltaRow(d, false)),
          'grid compact ranks-sites',
        )
      : el('p', { class: 'muted', text: 'No allocation site holds a different amount.' }),
    w.categories.length
      ? gridTable(
          ['category', h, m, 'difference'],
          w.categories.map((d) => deltaRow(d, true)),
          'grid compact ranks-categories',
        )
      : el('p', { class: 'muted', text: 'No category holds a different amount.' }),
  );
  return { box, details: out };
}

function tags(u: RankUnit): (HTMLElement | string)[] {
  const t: (HTMLElement | string)[] = [];
  if (u.outlier) t.push(el('span', { class: 'tag outlier-tag', title: outlierText(u.outlier), text: 'outlier' }));
  if (u.worst) t.push(el('span', { class: 'tag', text: 'worst' }));
  if (u.median) t.push(el('span', { class: 'tag median-tag', text: 'median' }));
  if (u.device === null)
    t.push(
      el('span', {
        class: 'muted defined',
        title: 'this snapshot records no device memory (no segments, no trace): nothing to compare',
        text: 'no devices',
      }),
    );
  else if (!u.counted)
    t.push(
      el('span', {
        class: 'muted defined',
        title: 'this device has neither allocator events nor allocated memory: it is left out of the figures',
        text: 'unused',
      }),
    );
  return t;
}

function rankTable(c: RanksContext, units: RankUnit[], devices: boolean): HTMLElement {
  const rows = units.map((u) => {
    const tr = el(
      'tr',
      {
        class: `rank-row${u.outlier ? ' outlier' : ''}${u.counted ? '' : ' not-counted'}`,
        'data-rank': u.rank,
        'data-device': u.device ?? '',
        'data-file': u.file,
        'data-allocated': u.allocated,
        'data-reserved': u.reserved,
        title: `open ${u.name}`,
      },
      el('td', { class: 'num' }, rankLink(c, u.file, String(u.rank), u.device ?? undefined)),
      devices ? el('td', { class: 'num', text: u.device === null ? '—' : String(u.device) }) : '',
      el('td', { class: 'file', title: u.name, text: clip(u.name, 160) }),
      u.device === null
        ? el('td', { class: 'num', text: '—' })
        : el('td', { class: 'num' }, bytesSpan(u.allocated, u.outlier ? 'worse' : '')),
      el('td', { class: 'num muted', text: u.device === null ? '' : peakAt(u.allocatedEvent) }),
      u.device === null ? el('td', { class: 'num', text: '—' }) : el('td', { class: 'num' }, bytesSpan(u.reserved)),
      el('td', { class: `num${u.oom ? ' oom' : ''}`, text: int(u.oom) }),
      el('td', { class: 'num', text: u.steps === null ? '—' : int(u.steps) }),
      el('td', {}, ...tags(u)),
    );
    tr.addEventListener('click', (e) => {
      if ((e.target as HTMLElement).closest('a')) return;
      void c.app.openRank(u.file, u.device ?? undefined);
    });
    return tr;
  });
  return gridTable(
    ['rank', ...(devices ? ['device'] : []), 'file', 'peak allocated', 'at', 'peak reserved', 'OOMs', 'steps', ''],
    rows,
    'grid compact ranks-table',
  );
}

function errorsSection(r: RanksReport): HTMLElement[] {
  if (!r.errors.length) return [];
  return [
    el('h3', { class: 'ranks-errors-title', text: `${plural(r.errors.length, 'file')} could not be read` }),
    gridTable(
      ['file', 'error', 'message'],
      r.errors.map((e) =>
        el(
          'tr',
          { 'data-file': clip(e.file, 500) },
          el('td', { class: 'file', title: e.file, text: clip(e.file, 160) }),
          el('td', {}, el('code', { text: e.code })),
          el('td', { class: 'msg', text: clip(e.message, 600) }),
        ),
      ),
      'grid compact ranks-errors',
    ),
  ];
}

/** The hover card of a bar. */
function unitTip(u: RankUnit): (Node | string)[] {
  return [
    el('b', { text: unitName(u) }),
    el('span', { class: 'loc', text: clip(u.name, 200) }),
    el('div', {}, `peak allocated ${bytes(u.allocated)} at ${peakAt(u.allocatedEvent)}`),
    el('div', {}, `peak reserved ${bytes(u.reserved)} at ${peakAt(u.reservedEvent)}`),
    u.outlier ? el('div', { class: 'tip-outlier', text: `outlier: ${outlierText(u.outlier)}` }) : '',
    u.oom ? el('div', { text: `${plural(u.oom, 'OOM event')}` }) : '',
    el('div', { class: 'muted', text: 'click to open this rank' }),
  ];
}

function chart(c: RanksContext, units: RankUnit[], devices: boolean): HTMLElement[] {
  const bars = units.filter((u) => u.counted);
  const canvas = el('canvas', { class: 'ranks-chart', 'aria-label': 'peak allocated and reserved bytes per rank' });
  canvas.dataset.ranks = bars.map((u) => u.rank).join(',');
  canvas.dataset.outliers = bars
    .filter((u) => u.outlier)
    .map((u) => u.rank)
    .join(',');
  const tip = tooltip(canvas);
  const box = el('div', { class: 'ranks-chart-box' }, canvas, tip.el);
  const readout = el('div', { class: 'readout ranks-readout' });
  const g = canvas.getContext('2d')!;
  const median = c.run.report.summary.median.allocated;
  let hover: number | null = null;

  const frame = (): Frame => {
    canvas.style.width = `${chartWidth(bars.length, box.clientWidth - 2)}px`;
    return { ...fitCanvas(canvas, g, 300, 300), pad: RANKS_PAD };
  };

  function draw() {
    const f = frame();
    g.clearRect(0, 0, f.w, f.h);
    const geo = barGeometry(bars.length, f);
    const max = Math.max(1, ...bars.map((u) => Math.max(u.allocated, u.reserved)));
    const ticks = byteTicks(max);
    const y = yScaleTo(ticks[ticks.length - 1].value, f);
    const bottom = f.h - f.pad.b;
    byteAxis(g, f, y, ticks, '#eef2f7');
    if (hover !== null) {
      g.fillStyle = RANK_COLORS.hover;
      g.fillRect(geo.left + hover * geo.group, f.pad.t, geo.group, bottom - f.pad.t);
    }
    bars.forEach((u, i) => {
      const x = barCentre(geo, i);
      g.fillStyle = RANK_COLORS.reserved;
      g.fillRect(x - geo.reservedWidth / 2, y.y(u.reserved), geo.reservedWidth, bottom - y.y(u.reserved));
      g.fillStyle = u.outlier ? RANK_COLORS.outlier : RANK_COLORS.allocated;
      g.fillRect(x - geo.allocatedWidth / 2, y.y(u.allocated), geo.allocatedWidth, bottom - y.y(u.allocated));
    });
    // The median peak allocated across the run.
    if (median) {
      const my = y.y(median.bytes);
      g.setLineDash([5, 4]);
      g.strokeStyle = RANK_COLORS.median;
      g.beginPath();
      g.moveTo(f.pad.l, my);
      g.lineTo(f.w - f.pad.r, my);
      g.stroke();
      g.setLineDash([]);
    }
    // The rank axis: one label per rank (under its devices' bars, bracketed when several), every
    // k-th one or as many as fit, so that no label runs into the next.
    g.fillStyle = '#64748b';
    g.textAlign = 'left';
    const spans = rankSpans(bars.map((u) => u.rank));
    if (!devices) {
      const widest = Math.max(...bars.map((u) => g.measureText(String(u.rank)).width), 1);
      const step = labelStep(geo.group, widest);
      g.textAlign = 'center';
      bars.forEach((u, i) => {
        if (i % step === 0) g.fillText(String(u.rank), barCentre(geo, i), bottom + 14);
      });
    } else {
      g.strokeStyle = '#94a3b8';
      for (const s of spans.filter((s) => s.to > s.from)) {
        const [x0, x1] = [barCentre(geo, s.from) - geo.reservedWidth / 2, barCentre(geo, s.to) + geo.reservedWidth / 2];
        g.beginPath();
        g.moveTo(x0, bottom + 3.5);
        g.lineTo(x1, bottom + 3.5);
        g.stroke();
      }
      const labels = placeLabels(
        spans.map((s) => {
          const text = String(s.rank);
          return { x: (barCentre(geo, s.from) + barCentre(geo, s.to)) / 2, text, width: g.measureText(text).width };
        }),
        f.pad.l,
        f.w - f.pad.r,
      );
      for (const l of labels) g.fillText(l.text, l.left, bottom + 16);
    }
    g.textAlign = 'right';
    g.fillText('rank', f.pad.l - 8, bottom + 14);
    g.textAlign = 'left';
    g.strokeStyle = '#cbd5e1';
    g.beginPath();
    g.moveTo(f.pad.l, bottom + 0.5);
    g.lineTo(f.w - f.pad.r, bottom + 0.5);
    g.stroke();
    // Outliers named above the plot, the farthest from the median first.
    g.font = '600 11px system-ui, sans-serif';
    const named = placeLabels(
      bars
        .map((u, i) => ({ u, x: barCentre(geo, i) }))
        .filter(({ u }) => u.outlier)
        .sort((a, b) => Math.abs(b.u.outlier!.above_median) - Math.abs(a.u.outlier!.above_median))
        .map(({ u, x }) => {
          const text = fitText(g, unitName(u), 140);
          return { x, text, width: g.measureText(text).width };
        }),
      2,
      f.w - 2,
    );
    g.fillStyle = RANK_COLORS.outlier;
    for (const l of named) g.fillText(l.text, l.left, f.pad.t - 10);
    g.font = '11px system-ui, sans-serif';
    canvas.dataset.left = String(geo.left);
    canvas.dataset.group = String(geo.group);
  }

  const at = (e: MouseEvent) => barAt(barGeometry(bars.length, frame()), bars.length, e.offsetX);
  canvas.addEventListener('mousemove', (e) => {
    const i = at(e);
    if (i !== hover) {
      hover = i;
      draw();
    }
    if (i === null) {
      tip.hide();
      return;
    }
    const u = bars[i];
    tip.show(e, ...unitTip(u));
    readout.textContent = `${unitName(u)} · ${u.name} · peak allocated ${bytes(u.allocated)} at ${peakAt(u.allocatedEvent)} · peak reserved ${bytes(u.reserved)}${u.outlier ? ` · outlier, ${outlierText(u.outlier)}` : ''}`;
  });
  const hint = 'Hover a bar for its figures; click it to open the rank.';
  canvas.addEventListener('mouseleave', () => {
    hover = null;
    readout.textContent = hint;
    draw();
  });
  canvas.addEventListener('click', (e) => {
    const i = at(e);
    if (i !== null) void c.app.openRank(bars[i].file, bars[i].device ?? undefined);
  });
  new ResizeObserver(() => draw()).observe(box);
  readout.textContent = hint;
  const legend = el(
    'div',
    { class: 'legend' },
    el('span', {}, el('i', { style: `background:${RANK_COLORS.reserved}` }), 'peak reserved'),
    el('span', {}, el('i', { style: `background:${RANK_COLORS.allocated}` }), 'peak allocated'),
    el('span', {}, el('i', { style: `background:${RANK_COLORS.outlier}` }), 'peak allocated of an outlier'),
    el(
      'span',
      { title: median ? exact(median.bytes) : undefined },
      el('i', { class: 'median-swatch' }),
      median ? `median peak allocated (${bytes(median.bytes)})` : 'median peak allocated',
    ),
  );
  queueMicrotask(draw);
  return [
    el('div', { class: 'toolbar' }, el('b', { text: 'Peak memory per rank' }), el('span', { class: 'spacer' }), legend),
    box,
    readout,
  ];
}

export async function renderRanks(c: RanksContext) {
  const r = c.run.report;
  const units = rankUnits(r);
  const devices = manyDevices(units);
  const read = r.files.length;
  const head = el(
    'div',
    { class: 'ranks-head' },
    el('h2', { text: `A run of ${plural(c.run.total, 'snapshot')}` }),
    el('p', {
      class: 'muted',
      text:
        `${plural(read, 'file')} read${r.errors.length ? `, ${int(r.errors.length)} not` : ''}; ` +
        (devices
          ? `${plural(r.summary.ranks, 'device')} compared (some files hold several: each device counts as a rank). `
          : `${plural(r.summary.ranks, 'rank')} compared. `) +
        `Each file was read by its own engine, summarized and closed again (${plural(c.run.peakEngines, 'engine')} at once at most); ` +
        'opening a rank reads its file again.',
    }),
  );
  const worst = worstSection(c, units);
  const note = r.summary.note ? el('div', { class: 'health info ranks-note', text: `Note: ${r.summary.note}.` }) : '';
  c.root.append(
    head,
    note,
    ...worst.box,
    ...(units.some((u) => u.counted) ? chart(c, units, devices) : []),
    figures(c, units),
    outliers(c, units),
    ...worst.details,
    el('h3', { text: devices ? 'Every rank, device by device' : 'Every rank' }),
    rankTable(c, units, devices),
    ...errorsSection(r),
  );
}
