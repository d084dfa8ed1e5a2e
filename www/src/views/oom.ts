// OOM: each out-of-memory event with the request, what was free, who held the memory, the events
// just before, and the engine's verdict and suggestions.
import type { ViewContext } from '../app-types';
import type { DeviceAnalysis } from '../types';
import { bytesSpan, card, el, int } from '../ui/format';
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
        card('request', bytesSpan(o.requested), '', 'primary'),
        card('device free', o.device_free === null ? '—' : bytesSpan(o.device_free)),
        card('allocated / reserved', bytesSpan(o.counters.allocated), [
          'of ',
          bytesSpan(o.counters.reserved),
          ' reserved',
        ]),
        card('largest free block', bytesSpan(o.largest_free_block), [
          bytesSpan(o.free_in_reserved),
          ' free in reserved segments',
        ]),
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
              el('td', { class: 'num' }, 'allocated ', bytesSpan(e.allocated)),
            ),
          ),
        ),
      ),
    );
  }
}
