// The details of one event: action, counters right after it, the block's lifetime, the stack.
import type { ViewContext } from '../app-types';
import type { EventDetail, Frame } from '../types';
import { DEFS, bytes, bytesSpan, duration, el, eventLabel, exact, hex, int } from './format';

const PYTHON = new Set(['user', 'generated', 'library']);

function frameItem(f: Frame, showKind: boolean): HTMLElement {
  return el(
    'li',
    {
      class: f.kind === 'user' ? 'user' : PYTHON.has(f.kind) ? f.kind : 'other',
      title: `${f.filename}:${f.line} ${f.name}`,
    },
    el('span', { class: 'fn', text: f.display }),
    showKind ? el('span', { class: 'kind', text: f.kind }) : '',
  );
}

/**
 * The stack of an event: its Python frames (user code emphasised), innermost first, each as
 * `name (short/path:line)` with the full `filename:line name` on hover; every frame (C++,
 * interpreter, allocator…) behind an "all N frames" toggle. A stack without Python frames shows
 * its first native frames.
 */
export function stackList(frames: Frame[]): HTMLElement {
  if (!frames.length) return el('p', { class: 'muted', text: 'No stack was recorded for this event.' });
  const python = frames.filter((f) => PYTHON.has(f.kind));
  const shown = python.length ? python : frames.filter((f) => f.kind === 'native').slice(0, 8);
  const box = el(
    'div',
    { class: 'stack-box' },
    python.length
      ? ''
      : el('p', { class: 'muted', text: 'No Python frame in this stack (a C++ thread, e.g. autograd’s backward).' }),
    el('ol', { class: 'stack python' }, ...shown.map((f) => frameItem(f, false))),
  );
  if (shown.length < frames.length)
    box.append(
      el(
        'details',
        { class: 'all-frames' },
        el('summary', { text: `all ${int(frames.length)} frames (C++, interpreter, allocator included)` }),
        el('ol', { class: 'stack all' }, ...frames.map((f) => frameItem(f, true))),
      ),
    );
  return box;
}

/** The panel of event `d`; `peak` selects the allocated peak (a "Peak" button when given). */
export function eventPanel(d: EventDetail, c: ViewContext, peak?: () => void): HTMLElement {
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
  const start = c.deviceOverview?.window.first_time_us ?? null;
  if (d.time_us !== null)
    rows.push([
      'time',
      el(
        'span',
        { title: new Date(d.time_us / 1000).toISOString().replace('T', ' ').replace('Z', ' UTC') },
        start !== null ? `${duration(d.time_us - start)} after the first event` : String(d.time_us),
      ),
    ]);
  if (d.device_free !== null)
    rows.push(['device free', el('span', { class: 'defined', title: DEFS.deviceFree }, bytesSpan(d.device_free))]);
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
    el(
      'h3',
      {},
      eventLabel(d.index),
      d.index === c.deviceOverview?.peaks.allocated.event ? el('span', { class: 'tag', text: 'allocated peak' }) : '',
    ),
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
              : `still ${String(lt.state_at_dump).replace(/_/g, ' ')} at the dump`,
            `; block ${bytes(lt.size as number)} (${exact(lt.size as number)})${lt.size_exact ? '' : ` (at least; up to ${bytes(lt.size_uncertainty as number)} more)`}`,
          ),
        )
      : null,
    el(
      'div',
      { class: 'actions' },
      jump('Memory tree here', 'tree'),
      jump('Allocator state here', 'state'),
      peakButton(peak, d.index === c.deviceOverview?.peaks.allocated.event),
    ),
    el('h4', { text: 'Stack (innermost first)' }),
    stackList(d.frames),
  );
}

/** A "Peak" button that selects the allocated peak (disabled when `here`), or nothing without a peak. */
export function peakButton(peak?: () => void, here = false): HTMLElement | null {
  if (!peak) return null;
  const b = el('button', {
    class: 'peak-button',
    text: 'Peak',
    title: here ? 'the allocated peak is selected' : 'select the allocated peak',
    disabled: here,
  });
  b.addEventListener('click', peak);
  return b;
}
