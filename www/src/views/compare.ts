// Compare: two opened snapshots side by side (another run, another rank), device by device. The
// engine computes everything: the other file's engine answers its side (`compareSide`), this
// file's engine compares with it (`compareWith`): figures and stacks of a (this file) and b (the
// other) with b − a: the figures, what the memory is by category (the largest change in one
// line), and the sites (matched by meaning: a moved line is one site with its line change).
// Then the two files step by step (compare-steps.ts). Below, two moments of this file
// (`diffMoments`): kept, freed, born between two events. The page only lays the answers out.
import type { ViewContext } from '../app-types';
import type { Comparison, DeviceComparison, Figure, MomentsDiff, Moved } from '../generated/answers';
import { bytesSpan, clip, clipLines, distinctNames, el, gridTable, int } from '../ui/format';
import { categoryCell, categoryRow, categorySummary, deltaCell, stackRow } from './compare-rows';
import { stepsSection } from './compare-steps';

function figureRow(f: Figure) {
  const cell = (v: number | null) =>
    el('td', { class: 'num' }, v === null ? '—' : f.unit === 'bytes' ? bytesSpan(v) : int(v));
  return el('tr', {}, el('th', { text: f.label }), cell(f.a), cell(f.b), deltaCell(f.delta, f.unit));
}

/** Both files take part in the comparison by site and category on this device. */
const traced = (d: DeviceComparison) => !d.a_lacks && !d.b_lacks;

/** Per device both files traced: what the memory is at each file's allocated peak. */
function categorySection(d: DeviceComparison, a: string, b: string): HTMLElement[] {
  // A file without trace events has no stacks to categorize its blocks by: all would read "unknown".
  if (!d.categories.length || !traced(d)) return [];
  return [
    el(
      'section',
      { class: 'compare-categories', 'data-device': d.device },
      el('h4', {
        text: `device ${d.device}: live memory by category at each file's allocated peak (largest change first)`,
      }),
      categorySummary(d.categories, a, b),
      gridTable(['category', a, b, 'difference'], d.categories.map(categoryRow), 'grid compact categories-delta'),
    ),
  ];
}

function render(cmp: Comparison, a: string, b: string): HTMLElement[] {
  const figures = cmp.devices.map((d) =>
    el(
      'section',
      {},
      el('h3', { text: `device ${d.device}` }),
      gridTable(['', a, b, 'difference'], d.figures.map(figureRow)),
    ),
  );
  const categories = cmp.devices.flatMap((d) => categorySection(d, a, b));
  const stacks = cmp.devices.filter(traced).flatMap((d) => [
    el('h4', {
      text: `device ${d.device}: live memory at each file's allocated peak (the dump without trace events), by site (largest change first)`,
    }),
    el('p', {
      class: 'muted',
      text: 'Sites are matched by function and file, then by their callers; a line moved by an edit is the same site, its move in the line column.',
    }),
    gridTable(
      ['change', a, b, 'difference', 'line', 'site (named by its innermost user frame; hover for all frames)'],
      d.stacks.map(stackRow),
      'grid compact compare-sites',
    ),
  ]);
  const why = cmp.devices
    .filter((d) => !traced(d))
    .map((d) => {
      const reason = (lacks: string | null, name: string) =>
        lacks === 'device'
          ? `${name} has no device ${d.device}`
          : lacks === 'stacks'
            ? `${name}'s blocks carry no stacks (recorded without torch.cuda.memory._record_memory_history)`
            : null;
      const reasons = [reason(d.a_lacks, a), reason(d.b_lacks, b)].filter(Boolean).join('; ');
      return el('p', {
        class: 'muted no-stacks',
        text: `device ${d.device}: no comparison by category or by site: ${reasons}.`,
      });
    });
  return [...figures, ...categories, ...stacks, ...why];
}

const MOVED_HEADERS = ['kept', 'freed', 'born', 'born and freed between', 'change (born − freed)'];

function movedCells(m: Moved) {
  const cell = (v: number) => el('td', { class: 'num' }, bytesSpan(v));
  return [cell(m.kept), cell(m.freed), cell(m.born), cell(m.transient), deltaCell(m.delta, 'bytes')];
}

/** Kept, freed and born memory between two moments of this file, by category and by site. */
function renderMoments(m: MomentsDiff): HTMLElement[] {
  const at = (e: number | null) => (e === null ? 'the window start' : `event ${int(e)}`);
  return [
    el(
      'p',
      { class: 'moments-summary' },
      `After ${at(m.event_a)}: `,
      bytesSpan(m.live_a),
      ` live; after ${at(m.event_b)}: `,
      bytesSpan(m.live_b),
      '. Kept ',
      bytesSpan(m.total.kept),
      ', freed ',
      bytesSpan(m.total.freed),
      ', born ',
      bytesSpan(m.total.born),
      ' (and ',
      bytesSpan(m.total.transient),
      ' born and freed in between).',
    ),
    gridTable(
      ['category', ...MOVED_HEADERS],
      m.by_category.map((x) => el('tr', { 'data-category': x.category }, categoryCell(x.category), ...movedCells(x))),
      'grid compact moments-categories',
    ),
    gridTable(
      ['site', ...MOVED_HEADERS],
      m.by_site.map((x) =>
        el(
          'tr',
          {},
          el(
            'td',
            { class: 'stack-cell', title: x.stack ? clipLines(x.stack, 60) : undefined },
            el('span', { class: 'label', text: clip(x.label) }),
            x.detail ? el('span', { class: 'detail', text: clip(x.detail) }) : '',
          ),
          ...movedCells(x),
        ),
      ),
      'grid compact moments-sites',
    ),
  ];
}

/** Two moments of the open file: from the window start (or the selection) to the allocated peak. */
function momentsSection(c: ViewContext): HTMLElement {
  const d = c.deviceOverview;
  const events = d?.events ?? 0;
  const box = el(
    'section',
    { class: 'compare-moments' },
    el('h3', { text: `Two moments of this file (device ${c.device})` }),
  );
  if (!events) {
    box.append(
      el('p', {
        class: 'muted',
        text: 'This file has no trace events: its one moment is the dump. Compare it with another file above.',
      }),
    );
    return box;
  }
  const peak = d?.peaks.allocated.event ?? events - 1;
  const first = c.event !== null && c.event !== peak ? Math.min(c.event, peak) : 0;
  const second = c.event !== null && c.event !== peak ? Math.max(c.event, peak) : peak;
  const input = (v: number, name: string) =>
    el('input', { type: 'number', min: 0, max: events - 1, value: v, 'aria-label': name, class: `moment-${name}` });
  const ia = input(first, 'a');
  const ib = input(second, 'b');
  const go = el('button', { text: 'Compare the moments' });
  const out = el('div', { class: 'moments-out' });
  const draw = async () => {
    const at = (i: HTMLInputElement) => JSON.stringify({ event: Number(i.value) });
    const m = await c.file.client.call('diffMoments', c.device, at(ia), at(ib));
    out.replaceChildren(...renderMoments(m));
  };
  go.addEventListener('click', () => void draw());
  box.append(
    el(
      'p',
      { class: 'muted' },
      'What was kept (live at both), freed and born between two events, by category and by site (defaults: the selected event or the first, and the allocated peak; the same as snapscope diff FILE --at A --at B).',
    ),
    el('div', { class: 'toolbar' }, 'after event ', ia, ' against after event ', ib, ' ', go),
    out,
  );
  void draw();
  return box;
}

export async function renderCompare(c: ViewContext) {
  const others = c.app.files.map((f, i) => ({ f, i })).filter(({ f }) => f !== c.file);
  if (!others.length) {
    c.root.append(
      el(
        'div',
        { class: 'health ok' },
        el('strong', { text: 'Open a second snapshot to compare. ' }),
        'Drop another file on the page (or use Open…): this view then shows both side by side, device by device, with the differences.',
      ),
      momentsSection(c),
    );
    return;
  }
  const names = distinctNames(c.app.files);
  const mine = names[c.app.files.indexOf(c.file)];
  // The file asked for (the Ranks view's worst rank against the median one), else the first other.
  const asked = others.some(({ i }) => i === c.other) ? c.other : null;
  const pick = el(
    'select',
    {},
    ...others.map(({ i }) => el('option', { value: i, text: names[i], selected: i === asked })),
  );
  const out = el('div');
  const draw = async () => {
    const other = c.app.files[Number(pick.value)];
    const otherName = names[Number(pick.value)];
    const side = await other.client.call('compareSide');
    const cmp = await c.file.client.call('compareWith', JSON.stringify(side));
    out.replaceChildren(...render(cmp, mine, otherName));
    out.append(await stepsSection(c, other, mine, otherName));
  };
  pick.addEventListener('change', () => void draw());
  c.root.append(
    el('div', { class: 'toolbar' }, el('b', { text: `${mine} compared with ` }), pick),
    out,
    momentsSection(c),
  );
  await draw();
}
