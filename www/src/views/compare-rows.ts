// Compare's rows, shared by the two-file comparison and the step-by-step one: a signed
// difference, a site with both sides, a category with both sides, the largest category change.
import type { CategoryDelta, Figure, StackDelta } from '../generated/answers';
import { bytes, bytesSpan, clip, clipLines, el, exact, int } from '../ui/format';
import { categoryColor } from '../ui/categories-palette';
import { largestChange } from './categories-layout';

/**
 * A difference with its sign, exact on hover; byte figures red when b is larger (more memory),
 * green when smaller. Counts (events, segments) stay uncoloured: more is not worse.
 */
export function deltaCell(delta: number | null, unit: Figure['unit']) {
  if (delta === null) return el('td', { class: 'num', text: '—' });
  const tone = unit !== 'bytes' ? '' : delta > 0 ? 'worse' : delta < 0 ? 'better' : '';
  return el('td', {
    class: `num ${tone}`,
    title: unit === 'bytes' ? exact(delta) : undefined,
    text: `${delta > 0 ? '+' : ''}${unit === 'bytes' ? bytes(delta) : int(delta)}`,
  });
}

/** How a row's two sides were matched, in words. */
const MATCHED: Record<string, string> = {
  stack: 'the same stack',
  code: 'the same functions and callers; lines moved',
  function: 'the same function, other callers',
};

export function stackRow(s: StackDelta) {
  const hover = [s.stack, s.stack_b ? `in b:\n${s.stack_b}` : ''].filter(Boolean).join('\n\n');
  return el(
    'tr',
    { 'data-change': s.change, 'data-matched': s.matched_by ?? '' },
    el('td', { text: s.change, title: s.matched_by ? `matched by ${MATCHED[s.matched_by]}` : undefined }),
    el('td', { class: 'num' }, bytesSpan(s.bytes_a)),
    el('td', { class: 'num' }, bytesSpan(s.bytes_b)),
    deltaCell(s.delta, 'bytes'),
    el(
      'td',
      { class: 'line-change', title: s.site_a && s.site_b ? `${s.site_a} → ${s.site_b}` : undefined },
      s.line_change ?? (s.matched_by === 'function' ? 'other callers' : ''),
    ),
    el(
      'td',
      { class: 'stack-cell', title: clipLines(hover, 60) },
      el('span', { class: 'label', text: clip(s.label) }),
      s.detail ? el('span', { class: 'detail', text: clip(s.detail) }) : '',
    ),
  );
}

/** "optimizer state +2.10 GiB between the runs": the engine's largest category change, in words. */
export function categorySummary(rows: CategoryDelta[], a: string, b: string): HTMLElement {
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

/** A category's name with its colour swatch, as the first cell of a row. */
export function categoryCell(category: string) {
  return el(
    'td',
    { class: 'cat' },
    el('i', { class: 'swatch', style: `background:${categoryColor(category)}` }),
    category,
  );
}

export function categoryRow(x: CategoryDelta) {
  return el(
    'tr',
    { 'data-category': x.category },
    categoryCell(x.category),
    el('td', { class: 'num' }, bytesSpan(x.bytes_a)),
    el('td', { class: 'num' }, bytesSpan(x.bytes_b)),
    deltaCell(x.delta, 'bytes'),
  );
}
