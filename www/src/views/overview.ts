// Overview: health first, then the headline figures of the selected device, then every device.
import type { ViewContext } from '../app-types';
import type { DeviceOverview, PeakPlace, StreamAnalysis } from '../generated/answers';
import { DEFS, bytes, bytesSpan, card, el, eventLabel, gridTable, int, pct, plural } from '../ui/format';
import { streamHex, streamsShape } from './streams-layout';
import { fitCanvas, onResize } from '../ui/canvas';
import { reveal } from '../ui/busy';
import { withDocLinks } from './doc-panels';
import { COLORS, drawTimeline, type Marker } from './timeline-draw';
import { PAD, flatNote, xScale } from './timeline-layout';

/**
 * Buckets of the Overview's small timeline. The worker computes this very timeline of each device
 * with the overview, before it builds the SnapshotDB (see worker.ts), so it draws at once.
 */
export const OVERVIEW_BUCKETS = 400;

/**
 * A small allocated/reserved timeline over the whole trace (the Timeline's own data: the engine's
 * min/max buckets), the allocated and reserved peaks marked; a click opens the Timeline there.
 */
function overviewChart(
  c: ViewContext,
  d: DeviceOverview,
  cardsPainted: Promise<void>,
): { el: HTMLElement; drawn: Promise<void> } {
  const canvas = el('canvas', {
    class: 'overview-chart',
    role: 'img',
    'aria-label': 'allocated and reserved memory over the trace; click to open the Timeline there',
    title: 'click: open the Timeline at this event',
  });
  const swatch = (color: string, text: string) => el('span', {}, el('i', { style: `background:${color}` }), text);
  const box = el(
    'div',
    { class: 'overview-timeline' },
    el(
      'div',
      { class: 'legend' },
      swatch(COLORS.reserved, 'reserved'),
      swatch(COLORS.allocated, 'allocated'),
      swatch(COLORS.peak, 'allocated peak'),
      d.peaks.reserved.event !== d.peaks.allocated.event ? swatch(COLORS.reservedPeak, 'reserved peak') : '',
      el('span', { class: 'muted', text: `over ${plural(d.events, 'event')} · click: open the Timeline there` }),
    ),
    canvas,
  );
  const note = el('p', { class: 'muted flat-note', hidden: true });
  box.append(note);
  const [from, to] = [0, d.events - 1];
  const markers: Marker[] = [{ index: d.peaks.allocated.event ?? 0, kind: 'peak', label: 'allocated peak' }];
  if (d.peaks.reserved.event !== d.peaks.allocated.event)
    markers.push({ index: d.peaks.reserved.event ?? 0, kind: 'reservedPeak', label: 'reserved peak' });
  // Asked at once (the worker answers it from the load, before the analysis asked after it),
  // drawn once the peak cards are on screen: drawing first would hold their frame back.
  const answer = c.file.client.call('timeline', c.device, from, to, OVERVIEW_BUCKETS);
  const drawn = Promise.all([answer, cardsPainted]).then(([data]) => {
    const why = flatNote(data, d.events, d.window.blocks_before_window);
    note.hidden = why === null;
    note.textContent = why ?? '';
    const g = canvas.getContext('2d')!;
    const frame = () => ({ ...fitCanvas(canvas, g, 130), pad: { ...PAD, t: 8, b: 20 } });
    const draw = () => {
      const f = frame();
      const x = xScale(data, from, to, f, false);
      drawTimeline(g, {
        data,
        frame: f,
        x,
        from,
        to,
        byTime: false,
        origin: null,
        markers,
        selected: null,
        hover: null,
        steps: [],
        stack: null,
        compact: true,
      });
    };
    draw();
    onResize(canvas, draw);
    canvas.addEventListener('click', (e) => {
      const f = frame();
      const i = xScale(data, from, to, f, false).iOf(e.offsetX);
      c.app.select(Math.max(from, Math.min(to, i)), 'timeline');
    });
    canvas.dataset.drawn = 'true';
  });
  return { el: box, drawn };
}

function eventLink(c: ViewContext, e: number | null) {
  const a = el('a', { href: '#', class: 'event-link', text: eventLabel(e) });
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    c.app.select(e, 'timeline');
  });
  return a;
}

/** "in step 3, backward" for a peak the engine placed (the same event), else nothing. */
function peakPlace(at: PeakPlace | null, event: number | null): HTMLElement | string {
  if (!at || at.event !== event) return '';
  const phase = at.phase && at.phase !== 'unknown' ? at.phase : null;
  const text =
    at.step !== null ? `in step ${int(at.step)}${phase ? `, ${phase}` : ''}` : phase ? `in the ${phase} phase` : '';
  return text ? el('span', { class: 'peak-place', text }) : '';
}

/**
 * The device's streams: a table when there are several or a free waited on another stream (a
 * `record_stream`), else one line; nothing without the figures (dump only, SnapshotDB file).
 */
function streamsSection(c: ViewContext, s: StreamAnalysis | null): HTMLElement[] {
  const list = s?.streams ?? [];
  const shape = streamsShape(list);
  if (shape === 'none') return [];
  if (shape === 'line')
    return [
      el(
        'p',
        { class: 'streams-line muted' },
        `Streams: one stream (${streamHex(list[0].stream)}), no frees waited on other streams.`,
      ),
    ];
  // Where a figure was reached: an event, or already before the first one (event null).
  const at = (e: number | null, bytes: number): (Node | string)[] =>
    bytes === 0
      ? []
      : e === null
        ? [el('span', { class: 'muted', text: ' at window start' })]
        : [' at ', eventLink(c, e)];
  const rows = list.map((x) =>
    el(
      'tr',
      { 'data-stream': x.stream },
      el('td', {}, el('code', { text: streamHex(x.stream) })),
      el('td', { class: 'num', text: int(x.allocations) }),
      el('td', { class: 'num' }, bytesSpan(x.peak_active.bytes), ...at(x.peak_active.event, x.peak_active.bytes)),
      el('td', { class: 'num' }, bytesSpan(x.at_allocated_peak)),
      el(
        'td',
        { class: 'num' },
        bytesSpan(x.peak_pending_free.bytes),
        ...at(x.peak_pending_free.event, x.peak_pending_free.bytes),
      ),
      el('td', { class: 'num' }, bytesSpan(x.pending_free_at_dump)),
    ),
  );
  return [
    el('h3', { text: `Streams (${int(list.length)})` }),
    gridTable(
      ['stream', 'allocations', 'peak active', 'at the allocated peak', 'pending-free peak', 'pending free at dump'],
      rows,
      'grid compact streams',
    ),
    el('p', {
      class: 'muted',
      title: DEFS.pendingFree,
      text: 'Active bytes allocated on each stream; pending free: freed by the program but waiting on work queued on other streams (record_stream).',
    }),
  ];
}

function health(c: ViewContext, d: DeviceOverview): HTMLElement {
  const cons = d.consistency;
  if (d.events === 0) {
    return el(
      'div',
      { class: 'health ok' },
      el('strong', { text: 'Dump only. ' }),
      `No trace events were recorded for device ${d.device}: the figures are the allocator state at dump time (record history with torch.cuda.memory._record_memory_history() to see peaks).`,
    );
  }
  if (cons.ok) {
    return el(
      'div',
      { class: 'health ok' },
      el('strong', { text: 'Exact. ' }),
      cons.dump_blocks_matched[1] > 0
        ? `The allocator replay reproduces the dump block by block (${int(cons.dump_blocks_matched[0])}/${int(cons.dump_blocks_matched[1])} blocks) using ${d.allocator_rules}.`
        : `The allocator replay ends exactly on the dump's segments (no block was live at the dump) using ${d.allocator_rules}.`,
      cons.ambiguous_bytes > 0
        ? el(
            'span',
            {},
            ' Counters before some frees may be low by up to ',
            bytesSpan(cons.ambiguous_bytes),
            ' (blocks allocated before the trace window).',
          )
        : '',
    );
  }
  const n = cons.issues.length + cons.more_issues;
  return el(
    'div',
    { class: 'health warn' },
    el('strong', { text: `Partial analysis: ${plural(n, 'event does', 'events do')} not fit the allocator state. ` }),
    'Counters are anchored at the dump and stay exact there; figures between the first issue and the dump may be off.',
    el(
      'ul',
      { class: 'issues' },
      ...cons.issues
        .slice(0, 8)
        .map((i) => el('li', {}, i.event !== null ? eventLink(c, i.event) : 'dump', ` ${i.code}: ${i.message}`)),
    ),
  );
}

export async function renderOverview(c: ViewContext) {
  const ov = c.file.overview;
  const d = c.deviceOverview;
  const root = el('div', { class: 'overview' });
  c.root.append(root);
  root.append(
    el('h2', { text: c.file.name }),
    el('p', {
      class: 'muted',
      text: `${ov.format ?? ''} snapshot, ${ov.encoding}, ${bytes(ov.source_bytes)} · ${plural(ov.devices.length, 'device')}`,
    }),
  );
  if (!d) {
    root.append(
      el('div', {
        class: 'health ok',
        text: 'This snapshot holds no segments and no trace events: the allocator had nothing reserved when it was dumped.',
      }),
    );
    return;
  }
  if (d.pinned_host)
    root.append(
      el('div', {
        class: 'health info',
        text: `Entry ${d.device} is pinned host memory (the CUDA host allocator's page-locked buffers, recorded with record_pinned_host_memory=True), not device memory: its figures are host RAM.`,
      }),
    );
  root.append(health(c, d));
  const p = d.peaks;
  // The headline figures come from the overview (the replay), at once; what needs the analysis
  // (the SnapshotDB) fills in after: the peaks' step and phase, the cached bytes at the peak, the
  // free share at the dump, the findings and the streams.
  // After the frame that paints the figures (a task queued from the next animation frame).
  const cardsPainted = new Promise<void>((res) => requestAnimationFrame(() => setTimeout(res)));
  const chart = d.events > 0 ? overviewChart(c, d, cardsPainted) : null;
  if (chart) root.append(chart.el);
  const span = !d.events
    ? 'only the dump was recorded'
    : d.window.first_time_us !== null && d.window.last_time_us !== null
      ? d.window.last_time_us === d.window.first_time_us
        ? 'all at one timestamp'
        : `${((d.window.last_time_us - d.window.first_time_us) / 1e6).toFixed(3)} s of wall time`
      : 'no timestamps (event order only)';
  const cards = el('div', { class: 'cards' });
  const allocPlace = el('span', {});
  const reservedPlace = el('span', {});
  const requestedCard = card('Peak requested', bytesSpan(p.requested.bytes), [
    'bytes callers asked for, at ',
    eventLink(c, p.requested.event),
  ]);
  if (d.events > 0) {
    const alloc = card(
      'Peak allocated',
      bytesSpan(p.allocated.bytes),
      ['at ', eventLink(c, p.allocated.event), allocPlace],
      'primary',
    );
    alloc.dataset.figure = 'peak-allocated';
    const reserved = card('Peak reserved', bytesSpan(p.reserved.bytes), [
      'at ',
      eventLink(c, p.reserved.event),
      reservedPlace,
    ]);
    reserved.dataset.figure = 'peak-reserved';
    cards.append(alloc, reserved, requestedCard);
  }
  const reservedAtDump = card('Reserved at dump', bytesSpan(d.at_dump.reserved), [
    plural(d.segments_at_dump, 'segment'),
    d.expandable_segments_at_dump ? ` (${int(d.expandable_segments_at_dump)} expandable)` : '',
  ]);
  cards.append(
    card('Allocated at dump', bytesSpan(d.at_dump.allocated), ['active ', bytesSpan(d.at_dump.active)]),
    reservedAtDump,
    card('Trace window', el('span', { text: plural(d.events, 'event') }), [
      span,
      d.window.oom_events ? el('span', { class: 'oom', text: ` · ${plural(d.window.oom_events, 'OOM event')}` }) : '',
    ]),
  );
  root.append(cards);
  const findings = el(
    'div',
    { class: 'findings' },
    el('p', { class: 'busy-inline' }, el('span', { class: 'spinner' }), 'looking for what stands out…'),
  );
  root.append(el('h3', { text: 'Findings' }), findings);
  const tail = el('div', {});
  root.append(tail);
  // The figures are on screen: no "computing…" cover over them while the rest comes.
  reveal(c.root);
  // Benchmarks: choosing the file → the peak figures painted.
  void cardsPainted.then(() => performance.mark('snapscope:peak-figures'));

  if (d.events > 0) {
    const actions = el('div', { class: 'actions' });
    const go = (label: string, view: 'tree' | 'state' | 'timeline', e: number | null) => {
      const b = el('button', { text: label });
      b.addEventListener('click', () => c.app.select(e, view));
      actions.append(b);
    };
    go('Who holds the peak? (memory tree)', 'tree', p.allocated.event);
    go('Allocator state at the peak', 'state', p.allocated.event);
    go('Timeline', 'timeline', null);
    tail.append(actions);
  } else {
    // A dump-only device: the dump is the answer.
    const actions = el('div', { class: 'actions' });
    for (const [label, view] of [
      ['Who holds the memory at the dump? (by stack)', 'peak'],
      ['Memory tree at the dump', 'tree'],
      ['Allocator state at the dump', 'state'],
    ] as const) {
      const b = el('button', { text: label });
      b.addEventListener('click', () => c.app.show(view));
      actions.append(b);
    }
    tail.append(actions);
  }

  const streams = el('div', { class: 'streams-slot' });
  tail.append(streams);

  if (ov.devices.length > 1) {
    const headers = [
      'device',
      'events',
      'peak allocated',
      'peak reserved',
      'allocated at dump',
      'reserved at dump',
      'replay',
    ];
    const rows: HTMLElement[] = [];
    for (const x of ov.devices) {
      const tr = el(
        'tr',
        { class: x.device === c.device ? 'current' : '' },
        el('td', { text: String(x.device) }),
        el('td', { class: 'num', text: int(x.events) }),
        el('td', { class: 'num' }, x.events ? bytesSpan(x.peaks.allocated.bytes) : '—'),
        el('td', { class: 'num' }, x.events ? bytesSpan(x.peaks.reserved.bytes) : '—'),
        el('td', { class: 'num' }, bytesSpan(x.at_dump.allocated)),
        el('td', { class: 'num' }, bytesSpan(x.at_dump.reserved)),
        el('td', { text: x.consistency.ok ? 'exact' : 'partial' }),
      );
      rows.push(tr);
    }
    tail.append(el('h3', { text: 'Devices' }), gridTable(headers, rows));
  }
  if (ov.warnings.length) {
    tail.append(
      el('h3', { text: 'Reader warnings' }),
      el('ul', { class: 'warnings' }, ...ov.warnings.map((w) => el('li', { text: `${w.code}: ${w.message}` }))),
    );
  }

  // `all`: the Overview shows the streams, the peak's and the dump's cards and the steps' peak
  // places, and its findings read every other part; one call, so none is computed twice.
  const analysis = await c.file.client.analyze('all', c.device, 'allocated_peak');
  const steps = d.events ? analysis.steps : null;
  allocPlace.replaceChildren(peakPlace(steps?.peak_allocated_at ?? null, p.allocated.event));
  reservedPlace.replaceChildren(peakPlace(steps?.peak_reserved_at ?? null, p.reserved.event));
  if (analysis.peak)
    requestedCard.after(
      card(
        'Reserved − allocated at the allocated peak',
        bytesSpan(analysis.peak.reserved_minus_allocated),
        ['cached, not handed out, at ', eventLink(c, analysis.peak.event)],
        '',
        DEFS.reservedMinusAllocated,
      ),
    );
  const dump = analysis.fragment.at.find((f) => f.label === 'dump');
  if (dump)
    reservedAtDump.after(
      card(
        'Free in reserved segments at dump',
        el('span', { text: pct(dump.free_share) }),
        [bytesSpan(dump.free_bytes), ' of reserved (pending frees excluded)'],
        '',
        DEFS.free,
      ),
      ...(dump.pending_free_bytes
        ? [
            card(
              'Pending free at dump',
              bytesSpan(dump.pending_free_bytes),
              'freed, waiting on other streams',
              '',
              DEFS.pendingFree,
            ),
          ]
        : []),
    );

  findings.replaceChildren();
  if (!analysis.findings.length) findings.append(el('p', { class: 'muted', text: 'Nothing stands out.' }));
  for (const f of analysis.findings) {
    findings.append(
      el(
        'div',
        { class: `finding ${f.priority}` },
        el('div', {}, el('span', { class: 'prio', text: f.priority }), el('b', { text: f.title })),
        el('div', { class: 'evidence' }, ...withDocLinks(c, f.evidence)),
        // A finding that only informs (what the program is, what a step created) has nothing to try.
        f.suggestion
          ? el(
              'div',
              {},
              el('i', { text: 'Try: ' }),
              ...withDocLinks(c, f.suggestion),
              f.expected_effect ? el('span', { class: 'muted', text: ` — expected: ${f.expected_effect}` }) : '',
            )
          : '',
      ),
    );
  }
  streams.replaceChildren(...streamsSection(c, analysis.streams));
  await chart?.drawn;
}
