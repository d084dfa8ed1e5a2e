// Allocator state at an event (default: the allocated peak): every reserved segment as a bar with
// its blocks at their offsets. Blue = allocated, amber = pending free, pale = free (cached) space.
// Shows where memory is fragmented and the largest free block a request could get.
import type { ViewContext } from '../app-types';
import type { AllocatorState, StateBlock, StateSegment } from '../types';
import { bytes, bytesSpan, card, el, eventLabel, exact, hex, int, pct } from '../ui/format';
import { fitCanvas } from '../ui/canvas';
import { tooltip } from '../ui/tooltip';
import { focusEvent } from './focus';
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
  const st = await c.file.client.call<AllocatorState>('state', c.device, event ?? -1);
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
  c.root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('b', { text: `Allocator state after ${eventLabel(event)}` }),
      el('span', { class: 'spacer' }),
      d.events ? evInput : '',
      d.events ? go : '',
    ),
    el(
      'div',
      { class: 'cards' },
      card('Reserved', bytesSpan(st.reserved), `${int(st.segments.length)} segments`),
      card('Allocated', bytesSpan(st.allocated), ['active ', bytesSpan(st.active)]),
      card(
        'Free in reserved segments',
        bytesSpan(st.free),
        `${pct(st.free_share)} of reserved (pending frees excluded)`,
      ),
      card('Largest free block', bytesSpan(st.largest_free), 'the biggest request served without a new segment'),
    ),
    st.unplaced_blocks
      ? el('div', {
          class: 'health warn',
          text: `${st.unplaced_blocks} live blocks lie outside every known segment (the trace does not fit the dump there).`,
        })
      : '',
    el(
      'div',
      { class: 'legend' },
      ...Object.entries({
        allocated: COLORS.active_allocated,
        'pending free': COLORS.active_pending_free,
        free: COLORS.inactive,
      }).map(([k, v]) => el('span', {}, el('i', { style: `background:${v}` }), k)),
      el('span', { class: 'muted', text: 'segments sorted by size; bar length ∝ segment size' }),
    ),
  );
  const canvas = el('canvas', { class: 'segmap' });
  const tip = tooltip(canvas);
  c.root.append(el('div', { class: 'segmap-box' }, canvas, tip.el));
  const g = canvas.getContext('2d')!;

  function draw() {
    const { w, h } = fitCanvas(canvas, g, 0, segs.length * ROW + 4);
    g.clearRect(0, 0, w, h);
    g.font = '11px ui-monospace, monospace';
    const scale = byteScale(segs, w);
    segs.forEach((s, r) => {
      const y = r * ROW;
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
    });
  }

  const blockTip = (s: StateSegment, b: StateBlock) => [
    el('b', { text: b.state.replace(/_/g, ' ') }),
    el('div', { text: `${bytes(b.size)} (${exact(b.size)}) at ${hex(b.address)}` }),
    b.state !== 'inactive'
      ? el('div', { text: `requested ${exact(b.requested)} · rounding ${exact(b.size - b.requested)}` })
      : el('div', { text: 'cached free space' }),
    el('div', {
      class: 'muted',
      text: `segment ${hex(s.address)} · ${s.segment_type} pool${s.is_expandable ? ' · expandable' : ''} · stream ${hex(s.stream)}`,
    }),
  ];
  canvas.addEventListener('mousemove', (e) => {
    const hit = blockAt(segs, byteScale(segs, canvas.clientWidth), e.offsetX, e.offsetY);
    if (hit) tip.show(e, ...blockTip(...hit));
    else tip.hide();
  });
  new ResizeObserver(() => draw()).observe(canvas);
  draw();
}
