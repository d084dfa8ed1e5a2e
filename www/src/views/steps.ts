// Steps: what the program is (the engine's program kind), the training steps it found
// (ProfilerStep ranges, optimizer steps or repeated backward passes), each step's peaks and its change from the previous one, the growth verdict
// across steps, and the named ranges (record_function, optimizer, data loader, compiled
// regions). A step or range opens the timeline on its events; a peak event opens its details.
import type { ViewContext } from '../app-types';
import type { GrowthVerdict, PhaseSpan, Step } from '../generated/answers';
import { bytesSpan, clip, el, eventLabel, gridTable, int, plural } from '../ui/format';
import { isFramework, spanName } from './phases-layout';

function eventLink(c: ViewContext, e: number | null, view: 'timeline' | 'categories' = 'timeline') {
  if (e === null) return el('span', { class: 'muted', text: 'window start' });
  const a = el('a', { href: '#', class: 'event-link', text: eventLabel(e) });
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    c.app.select(e, view);
  });
  return a;
}

function rangeLink(c: ViewContext, from: number, to: number, text: string, title?: string) {
  const a = el('a', {
    href: '#',
    class: 'range-link',
    text,
    title: title ?? `show events ${int(from)}–${int(to)} in the timeline`,
  });
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    c.app.showRange(from, to);
  });
  return a;
}

function leaksLink(c: ViewContext): HTMLElement {
  const a = el('a', { href: '#', text: 'See Leaks' });
  a.addEventListener('click', (e) => {
    e.preventDefault();
    c.app.show('leaks');
  });
  return el('span', {}, ' ', a);
}

/** A signed change "+40.00 MiB" / "−1.00 KiB" / "0 B", or a dash when there is none. */
function change(b: number | null): HTMLElement | string {
  if (b === null) return '—';
  return el('span', { class: b > 0 ? 'worse' : '' }, b > 0 ? '+' : '', bytesSpan(b));
}

function stepTable(c: ViewContext, steps: Step[]): HTMLElement {
  const rows = steps.map((s) =>
    el(
      'tr',
      { 'data-step': s.step, class: s.complete ? '' : 'partial' },
      el(
        'td',
        {},
        rangeLink(c, s.first_event, s.last_event, `step ${s.step}`),
        s.oom_event !== null && s.complete
          ? el('span', {
              class: 'tag',
              title: `an allocation failed at event ${int(s.oom_event)}; the phase it failed in went on allocating and the step finished`,
              text: 'recovered from OOM',
            })
          : s.oom_event !== null
            ? el('span', {
                class: 'tag partial-tag',
                title: `an allocation failed at event ${int(s.oom_event)}: the step did not finish`,
                text: 'out of memory',
              })
            : s.complete
              ? ''
              : el('span', { class: 'tag partial-tag', title: 'the trace window cuts this step', text: 'partial' }),
      ),
      el('td', { class: 'num', text: `${int(s.first_event)}–${int(s.last_event)}` }),
      el('td', { class: 'num' }, bytesSpan(s.peak_allocated.bytes)),
      el('td', {}, eventLink(c, s.peak_allocated.event), el('span', { class: 'muted', text: ` · ${s.peak_phase}` })),
      el('td', { class: 'num' }, bytesSpan(s.peak_reserved.bytes)),
      el('td', { class: 'num' }, bytesSpan(s.end_allocated)),
      el('td', { class: 'num' }, change(s.change_peak_allocated)),
      el('td', { class: 'num' }, change(s.change_end_allocated)),
    ),
  );
  return gridTable(
    [
      'step',
      'events',
      'peak allocated',
      'at (phase)',
      'peak reserved',
      'allocated at end',
      'peak vs previous',
      'end vs previous',
    ],
    rows,
    'grid steps',
  );
}

function rangeRows(c: ViewContext, ranges: PhaseSpan[]): HTMLElement {
  const rows = ranges.map((r) => {
    const known = r.start_event !== null && r.end_event !== null;
    return el(
      'tr',
      { 'data-group': r.group },
      el(
        'td',
        { class: 'range-name' },
        known
          ? rangeLink(c, r.start_event as number, r.end_event as number, clip(spanName(r), 200), r.name)
          : el('span', { title: r.name, text: clip(spanName(r), 200) }),
        r.open ? el('span', { class: 'tag', title: 'the range never closed in the trace', text: 'open' }) : '',
      ),
      el('td', { text: r.group }),
      el(
        'td',
        { class: 'num' },
        known
          ? `${int(r.start_event as number)}–${int(r.end_event as number)}`
          : el('span', { class: 'muted', text: 'no allocator event in it' }),
      ),
    );
  });
  return gridTable(['range', 'group', 'events'], rows, 'grid compact ranges');
}

export async function renderSteps(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  if (d.events === 0) {
    c.root.append(
      el('div', {
        class: 'health info no-steps',
        text: 'No steps were found: this device has no trace events (only the dump), so there are no phases, ranges or steps to show. Record with torch.cuda.memory._record_memory_history() during training to see them.',
      }),
    );
    return;
  }
  const s = await c.file.client.analyze('steps', c.device, 'dump');
  // What the program is comes first: it says whether steps and growth can mean anything here.
  c.root.append(
    el(
      'div',
      { class: 'health info program', 'data-kind': s.program.kind },
      el('strong', { text: 'What the trace shows. ' }),
      s.program.text,
    ),
  );
  const leak = s.growth.leak_signal;
  const lead: Record<GrowthVerdict, string> = {
    growing: 'Memory grows across steps. ',
    kept_across_steps: 'Memory is kept across steps. ',
    rising_working_set: 'The steps grow, nothing is kept: ',
    shrinking: 'Growth across steps: ',
    stable: 'Growth across steps: ',
    too_few_steps: 'Growth across steps: ',
    no_steps: '',
  };
  // Without steps the line under "Steps" says so; the verdict would repeat it.
  if (s.growth.verdict !== 'no_steps')
    c.root.append(
      el(
        'div',
        { class: `health growth ${leak ? 'warn' : 'info'}`, 'data-verdict': s.growth.verdict },
        el('strong', { text: lead[s.growth.verdict] }),
        s.growth.text,
        leak ? leaksLink(c) : '',
      ),
    );
  c.root.append(
    el('h3', { text: 'Steps' }),
    el('p', {
      class: 'muted step-source',
      text: s.step_source
        ? `${plural(s.steps_total, 'step')}, found from ${s.step_source}${s.steps_total > s.steps.length ? ` (the first ${int(s.steps.length)} listed)` : ''}. Click a step to see its events in the timeline, a peak event for its details.`
        : s.growth.text, // the engine's sentence on why no steps were found
    }),
  );
  // In a box of its own height (its header stays): 178 steps made the page 5,654 px long.
  if (s.steps.length) c.root.append(el('div', { class: 'table-scroll steps-scroll' }, stepTable(c, s.steps)));

  const ranges = s.phases.filter((p) => p.kind === 'range' && !isFramework(p));
  const framework = s.phases.filter(isFramework);
  c.root.append(el('h3', { text: 'Named ranges' }));
  if (ranges.length) c.root.append(el('div', { class: 'table-scroll ranges-scroll' }, rangeRows(c, ranges)));
  else
    c.root.append(
      el('p', {
        class: 'muted',
        text: 'No named ranges in this trace (record_function, optimizer, DataLoader or compiled regions leave them).',
      }),
    );
  if (framework.length) {
    const box = el('div', { hidden: true }, rangeRows(c, framework));
    const toggle = el('button', {
      class: 'framework-toggle',
      text: `Show ${plural(framework.length, 'framework range')}`,
    });
    toggle.addEventListener('click', () => {
      box.hidden = !box.hidden;
      toggle.textContent = `${box.hidden ? 'Show' : 'Hide'} ${plural(framework.length, 'framework range')}`;
    });
    c.root.append(
      el('p', { class: 'muted' }, 'Framework ranges (dynamo/inductor internals) are hidden. ', toggle),
      box,
    );
  }
  const runs = s.phases.filter((p) => p.kind === 'run');
  if (runs.length)
    c.root.append(
      el('p', {
        class: 'muted',
        text: `The phases (${plural(runs.length, 'run')} of set-up, forward, backward, optimizer, data or unknown code) are drawn as bands under the Timeline.`,
      }),
    );
}
