// Peak: who holds the memory at the peak (or the selected event), by stack and by top frame.
// The groups sum to the active counter at that event. A device without trace events gets the
// same attribution of the dump.
import type { ViewContext } from '../app-types';
import { focusEvent } from './focus';
import type { DeviceAnalysis } from '../types';
import { DEFS, bytesSpan, card, el, eventLabel, int, pct } from '../ui/format';
import { groupTable } from '../ui/groups';
import { peakButton } from '../ui/event-panel';

export async function renderPeak(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  const a = await c.file.client.call<DeviceAnalysis>('analyze', c.device, d.events ? (focusEvent(c) ?? -1) : -1);
  const p = a.peak;
  if (!p) {
    c.root.append(el('div', { class: 'health info', text: 'The engine has no attribution for this device.' }));
    return;
  }
  const by = el(
    'select',
    {},
    el('option', { value: 'stack', text: 'by stack (named by its innermost user frame)' }),
    el('option', { value: 'frame', text: 'by top frame' }),
  );
  const table = el('div');
  const draw = () =>
    table.replaceChildren(groupTable(by.value === 'frame' ? p.by_top_frame : p.by_stack, p.live_bytes));
  by.addEventListener('change', draw);
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
          : `Who holds the memory after ${eventLabel(p.event)}`,
      }),
      isPeak ? el('span', { class: 'tag', text: 'allocated peak' }) : '',
      el('span', { class: 'spacer' }),
      by,
      tree,
      peak !== null ? peakButton(() => c.app.select(peak, 'peak'), isPeak) : null,
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
    table,
  );
  draw();
}
