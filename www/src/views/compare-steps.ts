// Compare, step by step: step N of this file against step N of the other, each at the step's
// allocated peak, by category and by site (`snapscope diff A B --steps`). The other file's engine
// answers its steps (`stepSides`), this file's engine compares (`diffSteps`); the page lays the
// answer out: one row per step, the step with the largest change opened.
import type { OpenFile, ViewContext } from '../app-types';
import type { DeviceSteps, StepComparison } from '../generated/answers';
import { bytes, bytesSpan, clip, el, eventLabel, exact, gridTable, int } from '../ui/format';
import { categoryRow, categorySummary, deltaCell, stackRow } from './compare-rows';

/** Sites listed per step. */
const STEP_SITES = 10;

function stepDetails(s: StepComparison, a: string, b: string, open: boolean): HTMLElement {
  const at = (e: number | null) => (e === null ? 'the window start' : eventLabel(e));
  return el(
    'details',
    { class: 'step-diff', 'data-step': s.step, open },
    el(
      'summary',
      {},
      el('b', { text: `step ${int(s.step)}: ` }),
      'peak ',
      bytesSpan(s.peak_a),
      ' → ',
      bytesSpan(s.peak_b),
      ' (',
      el('span', {
        class: s.delta > 0 ? 'worse' : s.delta < 0 ? 'better' : '',
        title: exact(s.delta),
        text: `${s.delta > 0 ? '+' : ''}${bytes(s.delta)}`,
      }),
      `) at ${at(s.event_a)} / ${at(s.event_b)}`,
    ),
    categorySummary(s.categories, a, b),
    gridTable(['category', a, b, 'difference'], s.categories.map(categoryRow), 'grid compact steps-categories'),
    gridTable(
      ['change', a, b, 'difference', 'line', 'site (named by its innermost user frame; hover for all frames)'],
      s.stacks.map(stackRow),
      'grid compact steps-sites',
    ),
  );
}

function render(d: DeviceSteps, a: string, b: string): HTMLElement[] {
  if (d.note) return [el('p', { class: 'muted steps-note', text: `No step-by-step comparison: ${d.note}.` })];
  const largest = d.steps.reduce<StepComparison | null>(
    (m, s) => (!m || Math.abs(s.delta) > Math.abs(m.delta) ? s : m),
    null,
  );
  const table = gridTable(
    ['step', `peak in ${clip(a, 40)}`, `peak in ${clip(b, 40)}`, 'difference'],
    d.steps.map((s) =>
      el(
        'tr',
        { 'data-step': s.step },
        el('td', { class: 'num', text: int(s.step) }),
        el('td', { class: 'num' }, bytesSpan(s.peak_a)),
        el('td', { class: 'num' }, bytesSpan(s.peak_b)),
        deltaCell(s.delta, 'bytes'),
      ),
    ),
    'grid compact steps-diff',
  );
  return [
    el('p', {
      class: 'steps-summary',
      text: `${int(d.steps_a)} steps in ${clip(a, 80)}, ${int(d.steps_b)} in ${clip(b, 80)}; the ${int(d.steps.length)} both have, each at its allocated peak. ${largest && largest.delta !== 0 ? `Step ${int(largest.step)}, the largest change, is open.` : 'Every step peaks at the same bytes in both; the first is open.'}`,
    }),
    el('div', { class: 'steps-diff-scroll' }, table),
    ...d.steps.map((s) => stepDetails(s, a, b, s === largest)),
  ];
}

/** Step N of this file against step N of `other` on the view's device. */
export async function stepsSection(c: ViewContext, other: OpenFile, a: string, b: string): Promise<HTMLElement> {
  const box = el(
    'section',
    { class: 'compare-steps' },
    el('h3', { text: `Step by step (device ${c.device})` }),
    el('p', {
      class: 'muted',
      text: 'Step N of one run against step N of the other, at each step’s allocated peak, by category and by site (the same as snapscope diff A B --steps).',
    }),
  );
  try {
    const sides = await other.client.call('stepSides', c.device);
    const d = await c.file.client.call('diffSteps', c.device, JSON.stringify(sides), STEP_SITES);
    box.append(...render(d, a, b));
  } catch (e) {
    box.append(
      el('p', {
        class: 'muted steps-note',
        text: `No step-by-step comparison: ${e instanceof Error ? e.message : String(e)}`,
      }),
    );
  }
  return box;
}
