// OOM: each out-of-memory event with the request, what was free, who held the memory, the events
// just before, and the engine's verdict and suggestions.
import type { ViewContext } from './index';
import type { DeviceAnalysis } from '../types';
import { bytes, bytesSpan, el, int } from '../ui/format';
import { groupTable } from '../ui/groups';

export async function renderOom(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  const a = await c.file.client.call<DeviceAnalysis>('analyze', c.device, -1);
  if (!a.oom.ooms.length) {
    c.root.append(
      el(
        'div',
        { class: 'health ok' },
        el('strong', { text: 'No OOM on this device. ' }),
        'The trace holds no out-of-memory event (PyTorch records one whenever an allocation fails).',
      ),
    );
    return;
  }
  for (const o of a.oom.ooms) {
    const go = el('button', { text: 'Allocator state at this OOM' });
    go.addEventListener('click', () => c.app.select(o.event, 'state'));
    c.root.append(
      el('h3', { text: `Out of memory at event ${int(o.event)} — ${o.verdict.replace(/_/g, ' ')}` }),
      el(
        'div',
        { class: 'health warn' },
        o.explanation,
        el('ul', {}, ...o.suggestions.map((s) => el('li', { text: s }))),
      ),
      el(
        'div',
        { class: 'cards' },
        el(
          'div',
          { class: 'card primary' },
          el('div', { class: 'card-title', text: 'request' }),
          el('div', { class: 'card-value' }, bytesSpan(o.requested)),
        ),
        el(
          'div',
          { class: 'card' },
          el('div', { class: 'card-title', text: 'device free' }),
          el('div', { class: 'card-value' }, o.device_free === null ? '—' : bytesSpan(o.device_free)),
        ),
        el(
          'div',
          { class: 'card' },
          el('div', { class: 'card-title', text: 'allocated / reserved' }),
          el('div', { class: 'card-value' }, bytesSpan(o.counters.allocated)),
          el('div', { class: 'card-sub', text: `of ${bytes(o.counters.reserved)} reserved` }),
        ),
        el(
          'div',
          { class: 'card' },
          el('div', { class: 'card-title', text: 'largest free block' }),
          el('div', { class: 'card-value' }, bytesSpan(o.largest_free_block)),
          el('div', { class: 'card-sub', text: `${bytes(o.free_in_reserved)} free in reserved segments` }),
        ),
      ),
      el('div', { class: 'actions' }, go),
      el('h4', { text: 'Who held the memory' }),
      groupTable(o.top_stacks, o.counters.active),
      el('h4', { text: 'The events just before' }),
      el(
        'table',
        { class: 'grid compact' },
        el(
          'tbody',
          {},
          ...o.events_before.map((e) =>
            el(
              'tr',
              {},
              el('td', { class: 'num', text: int(e.index) }),
              el('td', { text: e.action }),
              el('td', { class: 'num' }, bytesSpan(e.size)),
              el('td', { class: 'num', text: `allocated ${bytes(e.allocated)}` }),
            ),
          ),
        ),
      ),
    );
  }
}
