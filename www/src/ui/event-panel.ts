// The details of one event: action, counters right after it, the block's lifetime, the stack.
import type { ViewContext } from '../app-types';
import type { EventDetail, EventFrame, FxFrame } from '../generated/answers';
import {
  DEFS,
  bytes,
  bytesSpan,
  bytesWithExact,
  clip,
  duration,
  el,
  eventLabel,
  hex,
  int,
  isAbsent,
  shortCpp,
  splitFrameDisplay,
  utcTime,
} from './format';
import { categoryColor } from './categories-palette';

const PYTHON = new Set(['user', 'generated', 'library']);

/** A frame's text whose `file:line` part never breaks across lines. */
function frameText(display: string): HTMLElement {
  const [head, tail] = splitFrameDisplay(display);
  return el('span', { class: 'fn' }, head, tail ? el('span', { class: 'nobreak', text: tail }) : '');
}

function frameItem(f: EventFrame, showKind: boolean): HTMLElement {
  return el(
    'li',
    {
      class: f.kind === 'user' ? 'user' : PYTHON.has(f.kind) ? f.kind : 'other',
      title: clip(`${f.filename}:${f.line} ${f.name}`, 2000),
    },
    // C++ frames with their template arguments folded (the whole name on hover).
    frameText(clip(PYTHON.has(f.kind) ? f.display : shortCpp(f.display))),
    showKind ? el('span', { class: 'kind', text: f.kind }) : '',
    f.fx ? el('div', { class: 'fx muted', text: clip(fxText(f.fx), 400) }) : '',
  );
}

/** `FX mm_default: call_function aten.mm.default ← model.py:12 forward`. */
function fxText(fx: FxFrame): string {
  const what = [fx.op, fx.target].filter((x) => x).join(' ');
  const from = fx.original_trace ? ` ← ${fx.original_trace}` : '';
  return `FX ${fx.name ?? 'node'}: ${what}${from}`;
}

/**
 * Frames listed per stack: a hostile stack holds 100k frames, and as many list items froze the tab
 * for seconds per event. The rest is counted ("N more frames").
 */
export const MAX_FRAMES = 200;

/** Frames of the C++ side (native code, the interpreter, the allocator, the runtime). */
const NATIVE = new Set<string>(['native', 'interpreter', 'allocator', 'runtime']);
const isNative = (f: EventFrame) => NATIVE.has(f.kind);

/** Native frames in a row that fold into one "N native frames" line (fewer stay listed). */
export const NATIVE_RUN = 3;

/**
 * The frames as runs: a run of at least NATIVE_RUN native frames in a row is one entry (a
 * template-expanded C++ stack is dozens of lines between two Python frames); every other frame is
 * its own entry.
 */
export function frameRuns(frames: EventFrame[]): (EventFrame | EventFrame[])[] {
  const out: (EventFrame | EventFrame[])[] = [];
  for (let i = 0; i < frames.length;) {
    let j = i;
    while (j < frames.length && isNative(frames[j])) j++;
    if (j - i >= NATIVE_RUN) {
      out.push(frames.slice(i, j));
      i = j;
    } else {
      out.push(frames[i]);
      i++;
    }
  }
  return out;
}

/**
 * An <ol> of the first MAX_FRAMES frames, and a line counting the others. With `fold`, runs of
 * native frames are one line each, "N native frames", that opens to list them.
 */
function frameList(cls: string, frames: EventFrame[], showKind: boolean, fold = false): HTMLElement[] {
  const listed = frames.slice(0, MAX_FRAMES);
  // Numbered by frame depth: a folded run takes its first frame's number, the next entry goes on.
  let depth = 1;
  const items = (fold ? frameRuns(listed) : listed).map((x) => {
    const at = depth;
    depth += Array.isArray(x) ? x.length : 1;
    if (!Array.isArray(x)) {
      const li = frameItem(x, showKind) as HTMLLIElement;
      if (fold) li.value = at;
      return li;
    }
    return el(
      'li',
      { class: 'native-run', value: at },
      el(
        'details',
        {},
        el('summary', { text: `${int(x.length)} native frames`, title: clip(x[0].display, 300) }),
        el('ol', { class: 'stack native', start: at }, ...x.map((f) => frameItem(f, showKind))),
      ),
    );
  });
  const list = el('ol', { class: cls }, ...items);
  const more = frames.length - MAX_FRAMES;
  return more > 0 ? [list, el('p', { class: 'muted', text: `${int(more)} more frames not listed` })] : [list];
}

/**
 * The stack of an event: its Python frames (user code emphasised), innermost first, each as
 * `name (short/path:line)` with the full `filename:line name` on hover; every frame (C++,
 * interpreter, allocator…) behind an "all N frames" toggle. A stack without Python frames shows
 * its three innermost native frames (the rest folded under "all N frames"). At most MAX_FRAMES of each list.
 */
export function stackList(frames: EventFrame[]): HTMLElement {
  if (!frames.length) return el('p', { class: 'muted', text: 'No stack was recorded for this event.' });
  const python = frames.filter((f) => PYTHON.has(f.kind));
  const shown = python.length ? python : frames.filter((f) => f.kind === 'native').slice(0, 3);
  const box = el(
    'div',
    { class: 'stack-box' },
    python.length
      ? ''
      : el('p', { class: 'muted', text: 'No Python frame in this stack (a C++ thread, e.g. autograd’s backward).' }),
    ...frameList('stack python', shown, false),
  );
  if (shown.length < frames.length)
    box.append(
      el(
        'details',
        { class: 'all-frames' },
        el('summary', { text: `all ${int(frames.length)} frames (C++, interpreter, allocator included)` }),
        ...frameList('stack all', frames, true, true),
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
        { title: utcTime(d.time_us) ?? `${d.time_us} µs (not a date)` },
        start !== null ? `${duration(d.time_us - start)} after the first event` : String(d.time_us),
      ),
    ]);
  if (d.device_free !== null)
    rows.push(['device free', el('span', { class: 'defined', title: DEFS.deviceFree }, bytesSpan(d.device_free))]);
  if (!isAbsent(d.compile_context)) rows.push(['compile context', clip(d.compile_context as string, 2000)]);
  if (!isAbsent(d.user_metadata)) rows.push(['user metadata', clip(d.user_metadata as string, 2000)]);
  rows.push(['phase', d.phase]);
  if (d.lifetime?.category)
    rows.push([
      'category',
      el(
        'span',
        { class: 'event-category' },
        el('i', { class: 'swatch', style: `background:${categoryColor(String(d.lifetime.category))}` }),
        `${d.lifetime.category} `,
        el('span', { class: 'muted', text: `(rule ${d.lifetime.category_rule ?? 'no-rule'})` }),
      ),
    ]);
  if (!isAbsent(d.forward_frames))
    rows.push(['forward stack', el('pre', { class: 'forward-frames' }, clip(d.forward_frames as string, 4000))]);
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
    d.action === 'snapshot'
      ? el('p', {
          class: 'health info',
          text: 'A “snapshot” event is the marker PyTorch records when the dump was taken: it is not an allocation (no block was allocated or freed here).',
        })
      : null,
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
            `; block ${bytesWithExact(lt.size as number)}${lt.size_exact ? '' : ` (at least; up to ${bytes(lt.size_uncertainty as number)} more)`}`,
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
