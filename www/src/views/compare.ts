// Compare: two opened snapshots side by side (another run, another rank), device by device. The
// engine computes everything: the other file's engine answers its side (`compareSide`), this
// file's engine compares with it (`compareWith`): figures and stacks of a (this file) and b (the
// other) with b − a: the figures, what the memory is by category (the largest change in one
// line), and the stacks. The page only lays the answer out.
import type { ViewContext } from '../app-types';
import type { CategoryDelta, Comparison, DeviceComparison, Figure, StackDelta } from '../generated/answers';
import { bytes, bytesSpan, clip, clipLines, distinctNames, el, exact, gridTable, int } from '../ui/format';
import { categoryColor } from '../ui/categories-palette';
import { largestChange } from './categories-layout';

/**
 * A difference with its sign, exact on hover; byte figures red when b is larger (more memory),
 * green when smaller. Counts (events, segments) stay uncoloured: more is not worse.
 */
function deltaCell(delta: number | null, unit: Figure['unit']) {
  if (delta === null) return el('td', { class: 'num', text: '—' });
  const tone = unit !== 'bytes' ? '' : delta > 0 ? 'worse' : delta < 0 ? 'better' : '';
  return el('td', {
    class: `num ${tone}`,
    title: unit === 'bytes' ? exact(delta) : undefined,
    text: `${delta > 0 ? '+' : ''}${unit === 'bytes' ? bytes(delta) : int(delta)}`,
  });
}

function figureRow(f: Figure) {
  const cell = (v: number | null) =>
    el('td', { class: 'num' }, v === null ? '—' : f.unit === 'bytes' ? bytesSpan(v) : int(v));
  return el('tr', {}, el('th', { text: f.label }), cell(f.a), cell(f.b), deltaCell(f.delta, f.unit));
}

function stackRow(s: StackDelta) {
  return el(
    'tr',
    {},
    el('td', { text: s.change }),
    el('td', { class: 'num' }, bytesSpan(s.bytes_a)),
    el('td', { class: 'num' }, bytesSpan(s.bytes_b)),
    deltaCell(s.delta, 'bytes'),
    el(
      'td',
      { class: 'stack-cell', title: s.stack === null ? undefined : clipLines(s.stack, 60) },
      el('span', { class: 'label', text: clip(s.label) }),
      s.detail ? el('span', { class: 'detail', text: clip(s.detail) }) : '',
    ),
  );
}

/** Both files traced this device: its peaks (and the stacks holding them) mean something. */
const traced = (d: DeviceComparison) => d.figures.some((f) => f.label === 'events' && !!f.a && !!f.b);

/** "optimizer state +2.10 GiB between the runs": the engine's largest category change, in words. */
function categorySummary(rows: CategoryDelta[], a: string, b: string): HTMLElement {
  const top = largestChange(rows);
  if (!top)
    return el('p', { class: 'cat-change', text: 'No category changed between the runs: the same bytes in each.' });
  return el(
    'p',
    { class: 'cat-change' },
    el('i', { class: 'swatch', style: `background:${categoryColor(top.category)}` }),
    el('b', { text: top.category }),
    ' ',
    el(
      'b',
      { class: top.delta > 0 ? 'worse' : 'better', title: exact(top.delta) },
      `${top.delta > 0 ? '+' : ''}${bytes(top.delta)}`,
    ),
    ' between the runs',
    el('span', {
      class: 'muted',
      text: `: ${top.delta > 0 ? 'more' : 'less'} in ${clip(b, 80)} than in ${clip(a, 80)}`,
    }),
  );
}

function categoryRow(x: CategoryDelta) {
  return el(
    'tr',
    { 'data-category': x.category },
    el(
      'td',
      { class: 'cat' },
      el('i', { class: 'swatch', style: `background:${categoryColor(x.category)}` }),
      x.category,
    ),
    el('td', { class: 'num' }, bytesSpan(x.bytes_a)),
    el('td', { class: 'num' }, bytesSpan(x.bytes_b)),
    deltaCell(x.delta, 'bytes'),
  );
}

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
  const stacks = cmp.devices
    .filter(traced)
    .flatMap((d) => [
      el('h4', { text: `device ${d.device}: live memory at the allocated peak, by stack (largest change first)` }),
      gridTable(
        ['change', a, b, 'difference', 'stack (named by its innermost user frame; hover for all frames)'],
        d.stacks.map(stackRow),
        'grid compact',
      ),
    ]);
  const why = cmp.devices
    .filter((d) => !traced(d))
    .map((d) => {
      const ev = d.figures.find((f) => f.label === 'events');
      const missing = !ev?.a && !ev?.b ? 'neither file has' : !ev?.a ? `${a} has no` : `${b} has no`;
      return el('p', {
        class: 'muted no-stacks',
        text: `device ${d.device}: no comparison by category or by stack: ${missing} trace events (the peak, its stacks and the categories they decide need both traced with torch.cuda.memory._record_memory_history).`,
      });
    });
  return [...figures, ...categories, ...stacks, ...why];
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
  };
  pick.addEventListener('change', () => void draw());
  c.root.append(el('div', { class: 'toolbar' }, el('b', { text: `${mine} compared with ` }), pick), out);
  await draw();
}
