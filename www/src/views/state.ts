// Allocator state at an event (default: the allocated peak): every reserved segment as a bar with
// its blocks at their offsets. Blue = allocated, amber = pending free, pale = free (cached) space.
// Shows where memory is fragmented and the largest free block a request could get.
import type { ViewContext } from '../app-types';
import type { StackText, StateBlock, StateSegment } from '../generated/answers';
import { DEFS, bytes, bytesSpan, card, clip, el, eventLabel, exact, hex, pct, plural } from '../ui/format';
import { fitCanvas } from '../ui/canvas';
import { tooltip } from '../ui/tooltip';
import { focusAt, focusEvent, focusSwitch } from './focus';
import { ROW, blockAt, byteScale, segmentOrder, xOfAddress } from './state-layout';

const COLORS: Record<string, string> = {
  active_allocated: '#2563eb',
  active_pending_free: '#f59e0b',
  inactive: '#e2e8f0',
};

export async function renderState(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  const event = focusEvent(c);
  const st = await c.file.client.state(c.device, focusAt(c));
  const segs = segmentOrder(st.segments);

  const evInput = el('input', {
    type: 'number',
    min: 0,
    max: Math.max(0, d.events - 1),
    value: event ?? '',
    class: 'event-input',
    placeholder: 'event',
  });
  const go = el('button', { text: 'Show' });
  go.addEventListener('click', () => c.app.select(evInput.value === '' ? null : Number(evInput.value), 'state'));
  const peak = d.events ? d.peaks.allocated.event : null;
  c.root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('b', {
        text: !d.events
          ? 'Allocator state at the dump (this snapshot has no trace events)'
          : event !== null && event === peak
            ? `Allocator state at the allocated peak (${eventLabel(event)})`
            : `Allocator state after the selected ${eventLabel(event)}`,
      }),
      el('span', { class: 'spacer' }),
      focusSwitch(c, 'state'),
      d.events ? evInput : '',
      d.events ? go : '',
    ),
    el(
      'div',
      { class: 'cards' },
      card('Reserved', bytesSpan(st.reserved), plural(st.segments.length, 'segment')),
      card('Allocated', bytesSpan(st.allocated), ['active ', bytesSpan(st.active)]),
      card(
        'Free in reserved segments',
        bytesSpan(st.free),
        `${pct(st.free_share)} of reserved (pending frees excluded)`,
        '',
        DEFS.free,
      ),
      card(
        'Largest free block',
        bytesSpan(st.largest_free),
        'the biggest request served without a new segment',
        '',
        DEFS.largestFree,
      ),
    ),
    st.unplaced_blocks
      ? el('div', {
          class: 'health warn',
          text: `${plural(st.unplaced_blocks, 'live block')} lie outside every known segment (the trace does not fit the dump there).`,
        })
      : '',
    el(
      'div',
      { class: 'legend' },
      ...Object.entries({
        allocated: [COLORS.active_allocated, 'handed out to tensors'],
        'pending free': [COLORS.active_pending_free, DEFS.pendingFree],
        'free (cached)': [COLORS.inactive, DEFS.free],
      }).map(([k, [v, def]]) => el('span', { title: def }, el('i', { style: `background:${v}` }), k)),
      el('span', {
        class: 'muted',
        text: 'segments sorted by size; bar length ∝ segment size; hover a block for its stack',
      }),
    ),
  );
  // Only the rows in sight are drawn: the canvas stays in view (sticky) in its scrolling box, and a
  // spacer gives the box the height of every row. 1,457 segments were a 26,000 px canvas, a
  // fifth of a second to allocate and paint on every draw.
  const canvas = el('canvas', { class: 'segmap', style: 'position:sticky;top:0' });
  const tip = tooltip(canvas);
  const spacer = el('div', { class: 'segmap-rest' });
  const box = el('div', { class: 'segmap-box' }, canvas, spacer, tip.el);
  c.root.append(box);
  const g = canvas.getContext('2d')!;
  const total = segs.length * ROW + 4;

  function draw() {
    // The box's own limit (style.css: 100vh − 230 px), less its padding.
    const view = Math.max(ROW * 4, Math.min(total, window.innerHeight - 238));
    const { w, h } = fitCanvas(canvas, g, 0, view);
    spacer.style.height = `${total - view}px`;
    const top = Math.min(box.scrollTop, total - view);
    g.clearRect(0, 0, w, h);
    g.font = '11px ui-monospace, monospace';
    const scale = byteScale(segs, w);
    const last = Math.min(segs.length, Math.ceil((top + h) / ROW));
    for (let r = Math.max(0, Math.floor(top / ROW)); r < last; r++) {
      const s = segs[r];
      const y = r * ROW - top;
      g.fillStyle = '#475569';
      g.fillText(`${hex(s.address)} ${bytes(s.size)}`, 2, y + 12);
      for (const b of s.blocks) {
        g.fillStyle = COLORS[b.state] ?? '#94a3b8';
        g.fillRect(
          xOfAddress(s, b.address, scale),
          y + 2,
          Math.max(1, b.size * scale - (b.state === 'inactive' ? 0 : 0.5)),
          ROW - 5,
        );
      }
      if (s.is_expandable) {
        g.fillStyle = '#7c3aed';
        g.fillRect(xOfAddress(s, s.address, scale) - 4, y + 2, 2, ROW - 5);
      }
    }
  }
  let queued = false;
  box.addEventListener('scroll', () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      draw();
    });
  });

  // Stacks by id, fetched on first hover (call_stacks: the naming frame, its caller).
  const stacks = new Map<number, Promise<StackText | null>>();
  const known = new Map<number, StackText | null>();
  const stackOf = (id: number) => {
    if (!stacks.has(id))
      stacks.set(
        id,
        c.file.client.call('stackText', id).catch(() => null),
      );
    return stacks.get(id)!;
  };
  const stackLines = (st: StackText | null | undefined, b: StateBlock): (HTMLElement | string)[] => {
    if (b.state === 'inactive') return [];
    if (b.stack_id === null)
      return [el('div', { class: 'muted', text: 'no stack recorded (allocated before the trace)' })];
    if (st === undefined) return [el('div', { class: 'muted', text: 'stack…' })];
    if (st === null) return [];
    return [
      el('div', { class: 'loc', text: clip(st.label) }),
      st.caller ? el('div', { class: 'muted', text: `called from ${clip(st.caller)}` }) : '',
    ];
  };
  const blockTip = (s: StateSegment, b: StateBlock, st?: StackText | null) => [
    el('b', { text: b.state === 'inactive' ? 'free (cached)' : b.state.replace(/^active_/, '').replace(/_/g, ' ') }),
    el('div', { text: `${bytes(b.size)} (${exact(b.size)}) at ${hex(b.address)}` }),
    b.state !== 'inactive'
      ? el('div', { text: `requested ${bytes(b.requested)} · rounding ${bytes(b.size - b.requested)}` })
      : el('div', { text: 'cached free space in a reserved segment' }),
    ...stackLines(st, b),
    el('div', {
      class: 'muted',
      text: `segment ${hex(s.address)} · ${s.segment_type} pool${s.is_expandable ? ' · expandable' : ''} · stream ${hex(s.stream)}`,
    }),
  ];
  let hovered: StateBlock | null = null;
  canvas.addEventListener('mousemove', (e) => {
    const hit = blockAt(segs, byteScale(segs, canvas.clientWidth), e.offsetX, e.offsetY + box.scrollTop);
    if (!hit) {
      hovered = null;
      tip.hide();
      return;
    }
    const [s, b] = hit;
    hovered = b;
    const id = b.stack_id;
    tip.show(e, ...blockTip(s, b, id === null ? null : known.get(id)));
    if (id !== null && b.state !== 'inactive' && !known.has(id))
      void stackOf(id).then((st) => {
        known.set(id, st);
        if (hovered === b) tip.update(...blockTip(s, b, st));
      });
  });
  canvas.addEventListener('mouseleave', () => (hovered = null));
  // Redrawn when the chart's width changes while it is on the page.
  let width = canvas.clientWidth;
  new ResizeObserver(() => {
    if (!canvas.isConnected || canvas.clientWidth === width) return;
    width = canvas.clientWidth;
    draw();
  }).observe(canvas);
  draw();
}
