// OOM: each out-of-memory event with the request, what was free, who held the memory, the events
// just before, and the engine's verdict and suggestions.
import type { ViewContext } from '../app-types';
import type { DumpRoom, OomView } from '../generated/answers';
import { DEFS, bytesSpan, card, el, eventLabel, int, plural } from '../ui/format';
import { groupTable } from '../ui/groups';
import { openWhatIf } from './whatif';

export async function renderOom(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  // The OOMs and the what-if their verdicts cite only (not every analysis).
  const a = await c.file.client.call('oomView', c.device);
  if (!a.oom.ooms.length) {
    c.root.append(...otherDevices(c));
    if (a.oom.at_dump) c.root.append(...dumpRoom(c, a.oom.at_dump));
    else
      c.root.append(
        el(
          'div',
          { class: 'health info' },
          el('strong', { text: 'No OOM event on this device. ' }),
          'PyTorch records one in the trace whenever an allocation fails.',
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
        card('device free', o.device_free === null ? '—' : bytesSpan(o.device_free), '', '', DEFS.deviceFree),
        card('allocated / reserved', bytesSpan(o.counters.allocated), [
          'of ',
          bytesSpan(o.counters.reserved),
          ' reserved',
        ]),
        card(
          'largest free block',
          bytesSpan(o.largest_free_block),
          [bytesSpan(o.free_in_reserved), ' free in reserved segments (pending frees excluded)'],
          '',
          DEFS.largestFree,
        ),
      ),
      whatIfLine(c, a, o.event),
      el('div', { class: 'actions' }, go),
      el('h4', { text: 'Who held the memory' }),
      groupTable(o.top_stacks, o.counters.active),
      el('h4', { text: 'The events just before' }),
      el(
        'table',
        { class: 'grid compact events-before' },
        // The action's bytes (a segment event's: the segment's), the allocated counter after it.
        el(
          'thead',
          {},
          el('tr', {}, ...['event', 'action', 'bytes', 'allocated after it'].map((h) => el('th', { text: h }))),
        ),
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
              el('td', { class: 'num' }, bytesSpan(e.allocated)),
            ),
          ),
        ),
      ),
    );
  }
}

/**
 * The simulator's word on this OOM (the recording with expandable segments toggled), with a link
 * that opens the What if view on that setting; nothing when the analysis has none.
 */
function whatIfLine(c: ViewContext, a: OomView, event: number): HTMLElement | string {
  const w = a.what_if;
  const o = w?.ooms.find((x) => x.event === event);
  if (!w || !o) return '';
  const go = el('a', { href: '#', class: 'what-if-link', text: 'Open in What if' });
  go.addEventListener('click', (e) => {
    e.preventDefault();
    openWhatIf(c, w.conf);
  });
  return el(
    'div',
    { class: `health ${o.happens ? 'info' : 'ok'} what-if-line`, 'data-happens': String(o.happens) },
    o.sentence,
    ' ',
    go,
    el('span', { class: 'muted', text: ' to see it on the chart and try other settings.' }),
  );
}

/** Other devices of this file that have OOM events, each with a link that switches to it. */
function otherDevices(c: ViewContext): HTMLElement[] {
  const others = c.file.overview.devices.filter((x) => x.device !== c.device && x.window.oom_events > 0);
  return others.map((x) => {
    const go = el('a', { href: '#', class: 'device-link', text: `Show device ${x.device}’s OOM` });
    go.addEventListener('click', (e) => {
      e.preventDefault();
      c.app.setDevice(x.device, 'oom');
    });
    return el(
      'div',
      { class: 'health warn' },
      el('strong', { text: `Device ${x.device} ran out of memory ` }),
      `(${plural(x.window.oom_events, 'OOM event')} in its trace); this is device ${c.device}. `,
      go,
    );
  });
}

/** A device without OOM event: the engine's sentence on the room at the dump, and its figures. */
function dumpRoom(c: ViewContext, r: DumpRoom): HTMLElement[] {
  const req = r.largest_request;
  const reqLink = req ? el('a', { href: '#', text: eventLabel(req.event) }) : null;
  reqLink?.addEventListener('click', (e) => {
    e.preventDefault();
    if (req) c.app.select(req.event, 'timeline');
  });
  return [
    // Without trace events nothing says whether an allocation failed: do not claim there was none.
    el('h3', { text: c.deviceOverview?.events ? 'No OOM event: the room at the dump' : 'The room at the dump' }),
    el('div', { class: 'health info oom-dump', text: r.summary }),
    el(
      'div',
      { class: 'cards' },
      card('allocated at the dump', bytesSpan(r.allocated), ['of ', bytesSpan(r.reserved), ' reserved'], 'primary'),
      card(
        'free in reserved segments',
        bytesSpan(r.free_in_reserved),
        'cached by the allocator (pending frees excluded)',
        '',
        DEFS.free,
      ),
      card(
        'largest free block',
        bytesSpan(r.largest_free_block),
        'the biggest request served without a new segment',
        '',
        DEFS.largestFree,
      ),
      card('pending free', bytesSpan(r.pending_free_bytes), 'freed, waiting on other streams', '', DEFS.pendingFree),
      req
        ? card('largest request of the trace', bytesSpan(req.bytes), [
            'at ',
            reqLink!,
            req.bytes > r.largest_free_block ? ' · would need a new segment' : ' · fits in the largest free block',
          ])
        : '',
    ),
  ];
}
