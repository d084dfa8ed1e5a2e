// Peak: who holds the memory at the peak (or the selected event), by stack and by top frame.
// The groups sum to the active counter at that event.
import type { ViewContext } from '../app-types';
import { focusEvent } from './focus';
import type { DeviceAnalysis } from '../types';
import { bytesSpan, card, el, eventLabel, int, pct } from '../ui/format';
import { groupTable } from '../ui/groups';

export async function renderPeak(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d || d.events === 0) {
    c.root.append(
      el('div', {
        class: 'health ok',
        text: 'No trace events for this device, so no peak over time: see Memory tree and Allocator state for the dump.',
      }),
    );
    return;
  }
  const a = await c.file.client.call<DeviceAnalysis>('analyze', c.device, focusEvent(c) ?? -1);
  const p = a.peak!;
  const by = el(
    'select',
    {},
    el('option', { value: 'stack', text: 'by allocation stack' }),
    el('option', { value: 'frame', text: 'by top frame' }),
  );
  const table = el('div');
  const draw = () =>
    table.replaceChildren(groupTable(by.value === 'frame' ? p.by_top_frame : p.by_stack, p.live_bytes));
  by.addEventListener('change', draw);
  const tree = el('button', { text: 'Memory tree at this event' });
  tree.addEventListener('click', () => c.app.select(p.event, 'tree'));
  c.root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('b', { text: `Who holds the memory after ${eventLabel(p.event)}` }),
      p.event === d.peaks.allocated.event ? el('span', { class: 'tag', text: 'allocated peak' }) : '',
      el('span', { class: 'spacer' }),
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
      card('reserved', bytesSpan(p.counters_at_event.reserved), [
        bytesSpan(p.reserved_minus_allocated),
        ' cached, not allocated',
      ]),
      el(
        'div',
        { class: 'card' },
        el('div', { class: 'card-title', text: 'attributed' }),
        el('div', { class: 'card-value', text: pct(p.coverage) }),
        el('div', { class: 'card-sub' }, bytesSpan(p.live_bytes), ` in ${int(p.live_blocks)} live blocks`),
      ),
    ),
    table,
  );
  draw();
}
