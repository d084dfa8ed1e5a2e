// Peak: who holds the memory at the peak (or the selected event), by stack and by top frame, with
// what it is (a bar by category) above. It can also be grouped by category, or by the category
// rule, phase, stream, compile context or user metadata of the allocating events (the engine's
// `categories` query template). The groups sum to the active counter at that event. A device
// without trace events gets the same attribution of the dump (by stack, frame and category).
import type { ViewContext } from '../app-types';
import { focusAt, focusSwitch } from './focus';
import { EngineFailure } from '../client';
import type { CategoryTotal, EngineAnswers, PeakAnalysis } from '../generated/answers';
import { DEFS, bytesSpan, card, el, eventLabel, gridTable, int, pct } from '../ui/format';
import { groupTable } from '../ui/groups';
import { categoryColor } from '../ui/categories-palette';
import { categoryStrip } from './category-strip';
import { byteShares } from './categories-layout';
import { streamHex } from './streams-layout';

/** The groupings of the view: the engine's own (stack, frame, category) and the template's fields. */
const GROUPINGS = [
  ['site', 'by site (stacks named by one frame merged)'],
  ['stack', 'by stack (named by its innermost user frame)'],
  ['frame', 'by top frame'],
  ['category', 'by category'],
  ['rule', 'by category rule'],
  ['phase', 'by phase of the allocation'],
  ['stream', 'by stream'],
  ['compile_context', 'by compile context'],
  ['user_metadata', 'by user metadata'],
] as const;
type Grouping = (typeof GROUPINGS)[number][0];
/** Groupings answered by the engine's analysis itself (the others need an event of the trace). */
const OWN = new Set<Grouping>(['site', 'stack', 'frame', 'category']);

/** The grouping chosen last, kept when another event or device is shown. */
let chosen: Grouping = 'site';

function categoryTable(p: PeakAnalysis): HTMLElement {
  const rows = byteShares(p.by_category, p.counters_at_event.active).map((x: CategoryTotal & { share: number }) =>
    el(
      'tr',
      { 'data-group': x.category },
      el(
        'td',
        { class: 'cat' },
        el('i', { class: 'swatch', style: `background:${categoryColor(x.category)}` }),
        el('b', { text: x.category }),
      ),
      el('td', { class: 'num' }, bytesSpan(x.bytes)),
      el('td', { class: 'share' }, el('div', { class: 'sharebar', style: `width:${pct(x.share)}` }), pct(x.share)),
      el('td', { class: 'num', text: int(x.blocks) }),
    ),
  );
  return gridTable(['category', 'bytes', 'share', 'blocks'], rows, 'grid peak-groups');
}

/** A [none]/[before the window] bucket of the template is not a value: shown muted. */
const bucket = (v: string) => /^\[.*\]$/.test(v);

function fieldTable(r: EngineAnswers['query'], by: Grouping): HTMLElement {
  const heading = GROUPINGS.find(([g]) => g === by)![1].replace(/^by /, '');
  if (!r.rows.length) return el('p', { class: 'muted', text: 'No live memory at this event.' });
  const rows = r.rows.map(([value, blocks, bytes, percent]) => {
    const v = String(value ?? '[none]');
    const share = Number(percent) / 100;
    const shown = by === 'stream' && !bucket(v) ? streamHex(v) : v;
    return el(
      'tr',
      { 'data-group': v },
      el('td', {
        class: bucket(v) ? 'muted' : '',
        title: v,
        text: shown.length > 300 ? shown.slice(0, 299) + '…' : shown,
      }),
      el('td', { class: 'num' }, bytesSpan(Number(bytes))),
      el('td', { class: 'share' }, el('div', { class: 'sharebar', style: `width:${pct(share)}` }), pct(share)),
      el('td', { class: 'num', text: int(Number(blocks)) }),
    );
  });
  return el(
    'div',
    {},
    gridTable([heading, 'bytes', 'share of live', 'blocks'], rows, 'grid peak-groups'),
    r.has_more ? el('p', { class: 'muted', text: `the first ${int(r.returned)} of ${int(r.total)} values` }) : '',
  );
}

export async function renderPeak(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  const p = await c.file.client.analyze('peak', c.device, focusAt(c));
  if (!p) {
    c.root.append(el('div', { class: 'health info', text: 'The engine has no attribution for this device.' }));
    return;
  }
  // The template's groupings read the allocating events: a dump-only device has none.
  const traced = !p.at_dump && p.event !== null;
  const by = el(
    'select',
    { class: 'group-by', 'aria-label': 'group the live memory' },
    ...GROUPINGS.map(([value, text]) =>
      el('option', {
        value,
        text: traced || OWN.has(value) ? text : `${text} (needs trace events)`,
        disabled: !traced && !OWN.has(value),
      }),
    ),
  );
  if (!traced && !OWN.has(chosen)) chosen = 'site';
  by.value = chosen;
  const table = el('div', { class: 'peak-table' });
  let drawing = 0;
  const draw = async () => {
    const g = (chosen = by.value as Grouping);
    const mine = ++drawing;
    if (g === 'site' || g === 'stack') {
      // The engine's sentence says how much of the live memory the rows hold.
      const shown = g === 'site' ? p.site_rows : p.stack_rows;
      table.replaceChildren(
        el('p', { class: 'rows-cover', text: shown.text }),
        groupTable(g === 'site' ? p.by_site : p.by_stack, p.live_bytes),
      );
      return;
    }
    if (g === 'frame') {
      table.replaceChildren(groupTable(p.by_top_frame, p.live_bytes));
      return;
    }
    if (g === 'category') {
      table.replaceChildren(categoryTable(p));
      return;
    }
    table.replaceChildren(el('p', { class: 'muted', text: 'Grouping…' }));
    const params = { device: c.device, event_id: p.event, group_by: g };
    try {
      const r = await c.file.client.call('query', 'categories', JSON.stringify(params));
      if (mine === drawing) table.replaceChildren(fieldTable(r, g));
    } catch (e) {
      const msg = e instanceof EngineFailure ? e.info.message : String(e);
      if (mine === drawing) table.replaceChildren(el('div', { class: 'health warn', text: `No grouping: ${msg}` }));
    }
  };
  by.addEventListener('change', () => void draw());
  const tree = el('button', { text: p.at_dump ? 'Memory tree at the dump' : 'Memory tree at this event' });
  tree.addEventListener('click', () => c.app.select(p.event, 'tree'));
  const peak = d.events && d.peaks.allocated.event !== null ? d.peaks.allocated.event : null;
  const isPeak = !p.at_dump && p.event === peak;
  c.root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('b', {
        text: p.at_dump
          ? 'Who holds the memory at the dump (this snapshot has no trace events)'
          : isPeak
            ? `Who holds the memory at the allocated peak (${eventLabel(p.event)})`
            : `Who holds the memory after the selected ${eventLabel(p.event)}`,
      }),
      el('span', { class: 'spacer' }),
      focusSwitch(c, 'peak'),
      by,
      tree,
    ),
    el(
      'div',
      { class: 'cards' },
      card(
        'allocated',
        bytesSpan(p.counters_at_event.allocated),
        ['active ', bytesSpan(p.counters_at_event.active)],
        'primary',
      ),
      card(
        'reserved',
        bytesSpan(p.counters_at_event.reserved),
        [bytesSpan(p.reserved_minus_allocated), ' reserved − allocated (cached, not handed out)'],
        '',
        DEFS.reservedMinusAllocated,
      ),
      card('attributed', el('span', { text: pct(p.coverage) }), [
        bytesSpan(p.live_bytes),
        ` in ${int(p.live_blocks)} live blocks`,
      ]),
    ),
    p.by_stack.length === 1 && p.by_stack[0].label === '[no stack recorded]'
      ? el('div', {
          class: 'health info no-stack-note',
          text: 'The dump’s blocks carry no stacks, so all memory falls in one group. Record with torch.cuda.memory._record_memory_history() before the dump to get the stacks that hold it.',
        })
      : '',
    p.by_category.length
      ? el(
          'section',
          { class: 'peak-categories' },
          el('h4', { text: 'What it is, by category' }),
          categoryStrip(p.by_category, p.counters_at_event.active, {
            label: 'live memory by category',
            width: (c.root.clientWidth || 1200) - 40,
            pick: () => c.app.select(p.event, 'categories'),
            pickHint: 'click for the Categories view (why each block is in its category)',
          }),
        )
      : '',
    table,
  );
  await draw();
}
