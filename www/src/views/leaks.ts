// Leaks: what was allocated in the window and is still allocated at the dump, whether the
// allocated floor keeps rising, and by which stacks. Without trace events there is no history to
// judge: the view says so and shows what the dump itself holds pending free. When the engine finds
// allocated memory growing from training step to step, its sentence comes first; the candidates
// are shown by category (what the kept memory is) and by allocation site.
import type { ViewContext } from '../app-types';
import type { LeakAnalysis, LeakView, StepsAnalysis } from '../generated/answers';
import { DEFS, bytes, bytesSpan, card, el, plural } from '../ui/format';
import { groupTable } from '../ui/groups';
import { byteTicks } from '../ui/plot';
import { categoryStrip } from './category-strip';

/** The engine's growth-across-steps sentence, when it is a leak signal, with a way to the Steps view. */
function stepGrowth(c: ViewContext, steps: StepsAnalysis | null): HTMLElement | '' {
  if (!steps?.growth.leak_signal) return '';
  const a = el('a', { href: '#', class: 'steps-link', text: 'See the steps' });
  a.addEventListener('click', (e) => {
    e.preventDefault();
    c.app.show('steps');
  });
  return el(
    'div',
    { class: 'health warn step-growth' },
    el('strong', {
      text: steps.growth.verdict === 'growing' ? 'Memory grows from step to step. ' : 'Memory is kept across steps. ',
    }),
    el('span', { class: 'growth-text', text: steps.growth.text }),
    ' ',
    a,
  );
}

/** The change of the floor in words: "rose by 3.76 GiB", "fell by 49.77 MiB", "stayed level". */
export function floorChange(growth: number): (Node | string)[] {
  if (growth === 0) return ['stayed level'];
  return [growth > 0 ? 'rose by ' : 'fell by ', bytesSpan(Math.abs(growth))];
}

/** The floor per tenth of the window as bars over a byte axis with round values. */
function floorChart(floor: number[]): HTMLElement {
  const ticks = byteTicks(Math.max(1, ...floor), 4);
  const top = ticks[ticks.length - 1].value;
  const axis = el(
    'div',
    { class: 'floor-axis' },
    ...ticks.map((t) => el('span', { style: `bottom:${(t.value / top) * 100}%`, text: t.label })),
  );
  const bars = el(
    'div',
    { class: 'floor', style: `--grid:${100 / (ticks.length - 1)}%` },
    ...floor.map((v, i) =>
      el('div', {
        class: 'floor-bar',
        title: `tenth ${i + 1} of the window: lowest allocated ${bytes(v)}`,
        style: `height:${Math.max(0.5, (v / top) * 100)}%`,
      }),
    ),
  );
  const x = el('div', { class: 'floor-x' }, ...floor.map((_, i) => el('span', { text: String(i + 1) })));
  return el('div', { class: 'floor-chart' }, axis, bars, x);
}

/**
 * The engine's leak verdict: its leak finding (a high or medium one calls a leak; an info one says
 * what the window kept and why that is not one, from the program's kind), or none.
 */
function verdict(a: LeakView): HTMLElement | '' {
  const f = a.findings.find((x) => x.category === 'leak' && x.title !== '' && !x.title.includes('freed but not yet'));
  if (!f) return '';
  const leak = f.priority === 'high' || f.priority === 'medium';
  return el(
    'div',
    { class: `health ${leak ? 'warn' : 'info'} leak-verdict`, 'data-priority': f.priority },
    el('strong', { text: `${f.title}. ` }),
    f.evidence,
  );
}

function headline(l: LeakAnalysis, stepsGrow: boolean, suspect: boolean): HTMLElement {
  const rose = l.floor_growth > 0;
  const steady = rose && l.floor_rises_steadily;
  const change = floorChange(l.floor_growth);
  return el(
    'div',
    { class: suspect ? 'health warn' : rose ? 'health info' : 'health ok' },
    el(
      'strong',
      {},
      ...(steady
        ? ['The allocated floor rises steadily: it ', ...change, ' over the window. ']
        : rose
          ? ['The allocated floor ', ...change, ' over the window, but not steadily. ']
          : ['No growth: the allocated floor ', ...change, ' over the window. ']),
    ),
    `${plural(l.candidates, 'block')} (`,
    bytesSpan(l.candidate_bytes),
    ') allocated inside the window are still allocated at the dump.',
    rose && !steady
      ? stepsGrow
        ? ' The lowest allocated level did not rise from tenth to tenth of the window, but the steps above keep memory from one to the next.'
        : suspect
          ? ' The lowest allocated level did not rise from tenth to tenth of the window, but the verdict above finds memory kept from one pass to the next.'
          : ' The lowest allocated level did not rise from tenth to tenth of the window: more likely memory in use than a leak.'
      : '',
    ' (The floor is the lowest allocated level in each tenth of the window; its change is from the first tenth to the last.)',
  );
}

export async function renderLeaks(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  // The leak analysis, the steps and the leak findings only (not every analysis).
  const a = await c.file.client.call('leakView', c.device);
  const l = a.leak;
  if (d.events === 0 || !l) {
    const frag = await c.file.client.analyze('fragment', c.device, 'dump');
    const dump = frag.at.find((f) => f.label === 'dump');
    c.root.append(
      el(
        'div',
        { class: 'health info' },
        el('strong', { text: 'Leaks need a trace. ' }),
        'This snapshot has no trace events for this device, only the dump: nothing says when its blocks were allocated or whether memory kept growing. Record the allocation history (torch.cuda.memory._record_memory_history()) before the steps you want to check.',
      ),
    );
    if (dump)
      c.root.append(
        el(
          'div',
          { class: 'cards' },
          card(
            'pending free at the dump',
            bytesSpan(dump.pending_free_bytes),
            dump.pending_free_bytes
              ? 'freed by the program, waiting on other streams'
              : 'no block waits on another stream',
            dump.pending_free_bytes ? 'primary' : '',
            DEFS.pendingFree,
          ),
          card('allocated at the dump', bytesSpan(dump.allocated), ['of ', bytesSpan(dump.reserved), ' reserved']),
        ),
      );
    return;
  }
  // "Leak candidates" only where the engine's verdict is a leak (growth across training steps
  // that is a leak signal, or its leak finding: a floor rising in a program whose steps it cannot
  // see); otherwise the same blocks are what the run kept at the dump, in plain type.
  const suspect =
    (a.steps?.growth.leak_signal ?? false) ||
    a.findings.some(
      (f) =>
        f.category === 'leak' &&
        (f.priority === 'high' || f.priority === 'medium') &&
        !f.title.includes('freed but not yet'),
    );
  const kept = suspect ? 'leak candidates' : 'kept to the dump';
  c.root.append(
    stepGrowth(c, a.steps),
    a.steps?.growth.leak_signal ? '' : verdict(a),
    headline(l, a.steps?.growth.leak_signal ?? false, suspect),
    el(
      'div',
      { class: 'cards' },
      card(
        suspect ? 'leak candidates' : 'allocated in the window, alive at the dump',
        bytesSpan(l.candidate_bytes),
        suspect
          ? `${plural(l.candidates, 'block')} allocated in the window, alive at the end`
          : `${plural(l.candidates, 'block')}; no leak by the verdict above`,
        suspect ? 'primary' : '',
      ),
      card(
        'pending free at dump',
        bytesSpan(l.pending_free_bytes),
        `${plural(l.pending_free_blocks, 'block')} freed but waiting on other streams`,
        '',
        DEFS.pendingFree,
      ),
      card(
        'from before the window',
        bytesSpan(l.before_window_bytes),
        `${plural(l.before_window_blocks, 'block')} live throughout (weights, caches)`,
      ),
      card(
        'long-lived',
        bytesSpan(l.long_lived_bytes),
        `${plural(l.long_lived_blocks, 'in-window block')} alive ≥ half the window`,
      ),
    ),
    el('h3', { text: 'Lowest allocated level per tenth of the window' }),
    floorChart(l.floor),
    ...(l.candidates_by_category.length
      ? [
          el('h3', {
            text: suspect
              ? 'What the kept memory is: leak candidates by category'
              : 'What the memory kept to the dump is, by category',
          }),
          categoryStrip(l.candidates_by_category, l.candidate_bytes, {
            label: `${kept} by category`,
            width: (c.root.clientWidth || 1200) - 40,
          }),
        ]
      : []),
    el('h3', { text: `${suspect ? 'Leak candidates' : 'Kept to the dump'} by allocation site` }),
    l.candidates_by_stack.length
      ? groupTable(l.candidates_by_stack, l.candidate_bytes)
      : el('p', { class: 'muted', text: 'none' }),
  );
}
