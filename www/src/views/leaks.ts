// Leaks: what was allocated in the window and is still allocated at the dump, whether the
// allocated floor keeps rising, and by which stacks.
import type { ViewContext } from '../app-types';
import type { DeviceAnalysis } from '../types';
import { bytes, bytesSpan, card, el, int } from '../ui/format';
import { groupTable } from '../ui/groups';

export async function renderLeaks(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d || d.events === 0) {
    c.root.append(
      el('div', { class: 'health ok', text: 'No trace events for this device: leaks need an allocation history.' }),
    );
    return;
  }
  const a = await c.file.client.call<DeviceAnalysis>('analyze', c.device, -1);
  const l = a.leak!;
  const max = Math.max(1, ...l.floor);
  const floor = el(
    'div',
    { class: 'floor' },
    ...l.floor.map((v, i) =>
      el('div', {
        class: 'floor-bar',
        title: `tenth ${i + 1}: ${bytes(v)}`,
        style: `height:${Math.max(2, (v / max) * 100)}%`,
      }),
    ),
  );
  c.root.append(
    el(
      'div',
      { class: l.floor_rises_steadily && l.candidate_bytes > 0 ? 'health warn' : 'health ok' },
      el('strong', {
        text:
          l.floor_rises_steadily && l.candidate_bytes > 0
            ? 'The allocated floor rises steadily. '
            : 'No steady growth. ',
      }),
      `${int(l.candidates)} blocks (`,
      bytesSpan(l.candidate_bytes),
      ') allocated inside the window are still allocated at the dump; the lowest allocated level rose by ',
      bytesSpan(l.floor_growth),
      ' from the first to the last tenth of the window.',
    ),
    el(
      'div',
      { class: 'cards' },
      card(
        'leak candidates',
        bytesSpan(l.candidate_bytes),
        `${int(l.candidates)} blocks allocated in the window, alive at the end`,
        'primary',
      ),
      card(
        'pending free at dump',
        bytesSpan(l.pending_free_bytes),
        `${int(l.pending_free_blocks)} blocks freed but waiting on other streams`,
      ),
      card(
        'from before the window',
        bytesSpan(l.before_window_bytes),
        `${int(l.before_window_blocks)} blocks live throughout (weights, caches)`,
      ),
      card(
        'long-lived',
        bytesSpan(l.long_lived_bytes),
        `${int(l.long_lived_blocks)} in-window blocks alive ≥ half the window`,
      ),
    ),
    el('h3', { text: 'Allocated floor per tenth of the window' }),
    floor,
    el('h3', { text: 'Leak candidates by allocation site' }),
    l.candidates_by_stack.length
      ? groupTable(l.candidates_by_stack, l.candidate_bytes)
      : el('p', { class: 'muted', text: 'none' }),
  );
}
