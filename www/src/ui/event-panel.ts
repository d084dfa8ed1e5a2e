// The details of one event: action, counters right after it, the block's lifetime, the stack.
import type { ViewContext } from '../app-types';
import type { EventDetail } from '../types';
import { bytesSpan, el, eventLabel, exact, hex } from './format';

export function stackList(frames: { filename: string; line: number; name: string }[]): HTMLElement {
  if (!frames.length) return el('p', { class: 'muted', text: 'No stack was recorded for this event.' });
  return el(
    'ol',
    { class: 'stack' },
    ...frames.map((f) =>
      el(
        'li',
        {},
        el('span', { class: 'fn', text: f.name }),
        el('span', { class: 'loc', text: ` ${f.filename}:${f.line}` }),
      ),
    ),
  );
}

export function eventPanel(d: EventDetail, c: ViewContext): HTMLElement {
  const jump = (label: string, view: 'tree' | 'state') => {
    const b = el('button', { text: label });
    b.addEventListener('click', () => c.app.select(d.index, view));
    return b;
  };
  const rows: [string, Node | string][] = [
    ['action', el('code', { text: d.action })],
    ['address', d.action === 'oom' ? '—' : hex(d.addr)],
    ['size', bytesSpan(d.size)],
    ['stream', hex(d.stream)],
  ];
  if (d.time_us !== null)
    rows.push(['time', new Date(d.time_us / 1000).toISOString().replace('T', ' ').replace('Z', '')]);
  if (d.device_free !== null) rows.push(['device free', bytesSpan(d.device_free)]);
  if (d.compile_context) rows.push(['compile context', d.compile_context]);
  if (d.user_metadata) rows.push(['user metadata', d.user_metadata]);
  const after: [string, number][] = [
    ['allocated', d.allocated],
    ['active', d.active],
    ['reserved', d.reserved],
    ['requested', d.requested],
  ];
  const lt = d.lifetime;
  return el(
    'div',
    { class: 'event-panel' },
    el('h3', { text: eventLabel(d.index) }),
    el('table', { class: 'kv' }, ...rows.map(([k, v]) => el('tr', {}, el('th', { text: k }), el('td', {}, v)))),
    el('h4', { text: 'Counters after this event' }),
    el(
      'table',
      { class: 'kv' },
      ...after.map(([k, v]) => el('tr', {}, el('th', { text: k }), el('td', {}, bytesSpan(v)))),
    ),
    lt
      ? el(
          'div',
          {},
          el('h4', { text: 'Block lifetime' }),
          el(
            'p',
            {},
            `${lt.origin === 'before_window' ? 'allocated before the window' : 'allocated at ' + eventLabel(lt.alloc_event as number)}, `,
            lt.free_completed_event !== null
              ? `freed at ${eventLabel(lt.free_completed_event as number)}`
              : `still ${lt.state_at_dump} at the dump`,
            `; block ${exact(lt.size as number)}${lt.size_exact ? '' : ` (at least; up to ${exact(lt.size_uncertainty as number)} more)`}`,
          ),
        )
      : null,
    el('div', { class: 'actions' }, jump('Memory tree here', 'tree'), jump('Allocator state here', 'state')),
    el('h4', { text: 'Stack (innermost first)' }),
    stackList(d.frames),
  );
}
