// Allocator state at an event (default: the allocated peak): every reserved segment as a bar with
// its blocks at their offsets. Blue = allocated, amber = pending free, pale = free (cached) space.
// Shows where memory is fragmented and the largest free block a request could get.
import { focusEvent, type ViewContext } from './index';
import type { AllocatorState, StateBlock } from '../types';
import { bytes, bytesSpan, card, el, eventLabel, exact, hex, int } from '../ui/format';

const ROW = 18;
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
  const segs = [...st.segments].sort((a, b) => b.size - a.size || a.address - b.address);
  const maxSize = Math.max(1, ...segs.map((s) => s.size));

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
  const frag = st.reserved ? st.free / st.reserved : 0;
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
      card('Allocated', bytesSpan(st.allocated), `active ${bytes(st.active)}`),
      card('Free in reserved segments', bytesSpan(st.free), `${(frag * 100).toFixed(1)}% of reserved`),
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
  const tip = el('div', { class: 'tip', hidden: true });
  const box = el('div', { class: 'segmap-box' }, canvas, tip);
  c.root.append(box);
  const g = canvas.getContext('2d')!;
  const labelW = 170;

  function draw() {
    const width = canvas.clientWidth || 1000;
    const height = segs.length * ROW + 4;
    const dpr = window.devicePixelRatio || 1;
    canvas.style.height = `${height}px`;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.font = '11px ui-monospace, monospace';
    const scale = (width - labelW - 8) / maxSize;
    segs.forEach((s, r) => {
      const y = r * ROW;
      g.fillStyle = '#475569';
      g.fillText(`${hex(s.address)} ${bytes(s.size)}`, 2, y + 12);
      for (const b of s.blocks) {
        g.fillStyle = COLORS[b.state] ?? '#94a3b8';
        const x = labelW + (b.address - s.address) * scale;
        g.fillRect(x, y + 2, Math.max(1, b.size * scale - (b.state === 'inactive' ? 0 : 0.5)), ROW - 5);
      }
      if (s.is_expandable) {
        g.fillStyle = '#7c3aed';
        g.fillRect(labelW - 4, y + 2, 2, ROW - 5);
      }
    });
  }

  function hitBlock(x: number, y: number): [(typeof segs)[number], StateBlock] | null {
    const s = segs[Math.floor(y / ROW)];
    if (!s) return null;
    const scale = (canvas.clientWidth - labelW - 8) / maxSize;
    const addr = s.address + (x - labelW) / scale;
    const b = s.blocks.find((b) => addr >= b.address && addr < b.address + b.size);
    return b ? [s, b] : null;
  }

  canvas.addEventListener('mousemove', (e) => {
    const h = hitBlock(e.offsetX, e.offsetY);
    if (!h) {
      tip.hidden = true;
      return;
    }
    const [s, b] = h;
    tip.hidden = false;
    tip.style.left = `${Math.min(e.offsetX + 14, canvas.clientWidth - 320)}px`;
    tip.style.top = `${e.offsetY + 16}px`;
    tip.replaceChildren(
      el('b', { text: b.state.replace(/_/g, ' ') }),
      el('div', { text: `${bytes(b.size)} (${exact(b.size)}) at ${hex(b.address)}` }),
      b.state !== 'inactive'
        ? el('div', { text: `requested ${exact(b.requested)} · rounding ${exact(b.size - b.requested)}` })
        : el('div', { text: 'cached free space' }),
      el('div', {
        class: 'muted',
        text: `segment ${hex(s.address)} · ${s.segment_type} pool${s.is_expandable ? ' · expandable' : ''} · stream ${hex(s.stream)}`,
      }),
    );
  });
  canvas.addEventListener('mouseleave', () => (tip.hidden = true));
  new ResizeObserver(() => draw()).observe(canvas);
  draw();
}
