// Memory tree as an icicle flame graph: who holds the live memory at an event (default: the
// allocated peak). Width = live bytes. Click zooms, search highlights, the keyboard walks the tree
// (↑ parent, ↓ largest child, ←/→ siblings, Enter zoom, Esc reset), and the side list reaches
// frames too thin to click.
import { focusEvent, type ViewContext } from './index';
import type { MemoryTree, TreeNode } from '../types';
import { bytes, bytesSpan, el, eventLabel, exact, int } from '../ui/format';

const ROW = 20;

function hue(s: string) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return Math.abs(h) % 360;
}

export async function renderTree(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  const event = focusEvent(c);
  const tree = await c.file.client.call<MemoryTree>('tree', c.device, event ?? -1);
  const nodes = tree.nodes;
  const kids: number[][] = nodes.map(() => []);
  for (const n of nodes) if (n.parent !== null) kids[n.parent].push(n.id);
  for (const k of kids) k.sort((a, b) => nodes[b].total_bytes - nodes[a].total_bytes);
  const maxDepth = Math.max(...nodes.map((n) => n.depth));

  let zoom = 0;
  let selected = 0;
  let query = '';
  const matches = new Set<number>();

  const isPeak = event !== null && event === d.peaks.allocated.event;
  const evInput = el('input', {
    type: 'number',
    min: 0,
    max: d.events - 1,
    value: event ?? '',
    placeholder: 'event',
    class: 'event-input',
  });
  const evGo = el('button', { text: 'Show' });
  evGo.addEventListener('click', () => c.app.select(evInput.value === '' ? null : Number(evInput.value), 'tree'));
  const peakBtn = el('button', { text: 'Peak' });
  peakBtn.addEventListener('click', () => c.app.select(d.peaks.allocated.event, 'tree'));
  const search = el('input', { type: 'search', placeholder: 'Search frames (file, function)…', class: 'search' });
  const head = el(
    'div',
    { class: 'toolbar' },
    el(
      'span',
      {},
      el('b', { text: `Live memory after ${eventLabel(event)}` }),
      isPeak ? el('span', { class: 'tag', text: 'allocated peak' }) : '',
      ' · ',
      bytesSpan(nodes[0].total_bytes),
      ` in ${int(nodes[0].blocks)} blocks`,
    ),
    el('span', { class: 'spacer' }),
    evInput,
    evGo,
    peakBtn,
    search,
  );
  const crumbs = el('div', { class: 'crumbs' });
  const canvas = el('canvas', { class: 'flame', tabindex: 0, 'aria-label': 'memory flame graph' });
  const tip = el('div', { class: 'tip', hidden: true });
  const side = el('aside', { class: 'tree-side' });
  const wrap = el(
    'div',
    { class: 'tree-view' },
    el('div', { class: 'flame-col' }, head, crumbs, el('div', { class: 'flame-box' }, canvas, tip)),
    side,
  );
  c.root.append(wrap);
  const g = canvas.getContext('2d')!;

  type Box = { id: number; x: number; w: number; y: number };
  let boxes: Box[] = [];

  function layout(width: number) {
    boxes = [];
    const z = nodes[zoom];
    const place = (id: number, x: number, w: number) => {
      const n = nodes[id];
      boxes.push({ id, x, w, y: (n.depth - z.depth) * ROW });
      let cx = x;
      for (const k of kids[id]) {
        const kw = (nodes[k].total_bytes / Math.max(1, n.total_bytes)) * w;
        if (kw >= 0.3) place(k, cx, kw);
        cx += kw;
      }
    };
    place(zoom, 0, width);
  }

  function draw() {
    const width = canvas.clientWidth || 900;
    const height = (maxDepth - nodes[zoom].depth + 1) * ROW + 4;
    const dpr = window.devicePixelRatio || 1;
    canvas.style.height = `${height}px`;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    layout(width);
    g.font = '12px system-ui, sans-serif';
    for (const b of boxes) {
      const n = nodes[b.id];
      const synthetic = n.filename === null && b.id !== 0;
      const base =
        b.id === 0
          ? 'hsl(215 20% 75%)'
          : synthetic
            ? 'hsl(0 0% 78%)'
            : `hsl(${hue(n.filename ?? '')} 60% ${68 - (n.depth % 3) * 5}%)`;
      g.fillStyle =
        query && !matches.has(b.id) ? 'hsl(0 0% 90%)' : query && matches.has(b.id) ? 'hsl(330 80% 65%)' : base;
      g.fillRect(b.x, b.y, Math.max(0.5, b.w - 0.5), ROW - 1);
      if (b.id === selected) {
        g.strokeStyle = '#0f172a';
        g.lineWidth = 2;
        g.strokeRect(b.x + 1, b.y + 1, Math.max(1, b.w - 2), ROW - 3);
      }
      if (b.w > 36) {
        g.fillStyle = '#0f172a';
        const text = `${n.label} · ${bytes(n.total_bytes)}`;
        let t = text;
        const maxw = b.w - 8;
        if (g.measureText(t).width > maxw) {
          while (t.length > 1 && g.measureText(t + '…').width > maxw) t = t.slice(0, -1);
          t += '…';
        }
        g.fillText(t, b.x + 4, b.y + 14);
      }
    }
    renderCrumbs();
    renderSide();
  }

  function path(id: number) {
    const p: number[] = [];
    for (let x: number | null = id; x !== null; x = nodes[x].parent) p.unshift(x);
    return p;
  }

  function renderCrumbs() {
    crumbs.replaceChildren(
      ...path(zoom).flatMap((id, i) => {
        const a = el('a', { href: '#', text: i === 0 ? 'all' : (nodes[id].name ?? nodes[id].label) });
        a.addEventListener('click', (e) => {
          e.preventDefault();
          zoom = id;
          selected = id;
          draw();
        });
        return i ? [el('span', { text: ' › ' }), a] : [a];
      }),
    );
  }

  function nodeRow(id: number, total: number) {
    const n = nodes[id];
    const a = el('a', { href: '#', text: n.label });
    a.addEventListener('click', (e) => {
      e.preventDefault();
      selected = id;
      zoom = n.parent ?? 0;
      draw();
    });
    return el(
      'tr',
      {},
      el('td', {}, a),
      el('td', { class: 'num' }, bytesSpan(n.total_bytes)),
      el('td', { class: 'num', text: `${((n.total_bytes / Math.max(1, total)) * 100).toFixed(1)}%` }),
      el('td', { class: 'num', text: int(n.blocks) }),
    );
  }

  function renderSide() {
    const n = nodes[selected];
    const root = nodes[0].total_bytes;
    const list = query
      ? [...matches].sort((a, b) => nodes[b].total_bytes - nodes[a].total_bytes).slice(0, 200)
      : kids[selected];
    side.replaceChildren(
      ...[
        el('h3', { text: n.label }),
        n.filename ? el('p', { class: 'loc', text: `${n.filename}:${n.line}` }) : '',
        el(
          'table',
          { class: 'kv' },
          el(
            'tr',
            {},
            el('th', { text: 'live bytes' }),
            el(
              'td',
              {},
              bytesSpan(n.total_bytes),
              ` (${((n.total_bytes / Math.max(1, root)) * 100).toFixed(1)}% of all)`,
            ),
          ),
          el('tr', {}, el('th', { text: 'self bytes' }), el('td', {}, bytesSpan(n.self_bytes))),
          el('tr', {}, el('th', { text: 'requested' }), el('td', {}, bytesSpan(n.requested_bytes))),
          el(
            'tr',
            {},
            el('th', { text: 'blocks' }),
            el('td', { text: `${int(n.blocks)} (${int(n.self_blocks)} here)` }),
          ),
        ),
        el('h4', { text: query ? `${matches.size} frames match “${query}”` : `Callees (${kids[selected].length})` }),
        el('table', { class: 'grid compact' }, el('tbody', {}, ...list.map((k) => nodeRow(k, root)))),
      ],
    );
  }

  function hit(x: number, y: number) {
    return boxes.find((b) => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW);
  }

  canvas.addEventListener('mousemove', (e) => {
    const b = hit(e.offsetX, e.offsetY);
    if (!b) {
      tip.hidden = true;
      return;
    }
    const n: TreeNode = nodes[b.id];
    tip.hidden = false;
    tip.style.left = `${Math.min(e.offsetX + 14, canvas.clientWidth - 320)}px`;
    tip.style.top = `${e.offsetY + 16}px`;
    tip.replaceChildren(
      el('b', { text: n.label }),
      el('div', {
        text: `${bytes(n.total_bytes)} (${exact(n.total_bytes)}) · ${((n.total_bytes / Math.max(1, nodes[0].total_bytes)) * 100).toFixed(1)}%`,
      }),
      el('div', { text: `self ${bytes(n.self_bytes)} · ${int(n.blocks)} blocks` }),
      n.filename ? el('div', { class: 'loc', text: `${n.filename}:${n.line}` }) : '',
    );
  });
  canvas.addEventListener('mouseleave', () => (tip.hidden = true));
  canvas.addEventListener('click', (e) => {
    const b = hit(e.offsetX, e.offsetY);
    if (!b) return;
    selected = b.id;
    zoom = b.id === zoom ? (nodes[b.id].parent ?? 0) : b.id;
    draw();
  });
  canvas.addEventListener('keydown', (e) => {
    const n = nodes[selected];
    const sib = n.parent === null ? [selected] : kids[n.parent];
    const at = sib.indexOf(selected);
    if (e.key === 'ArrowUp' && n.parent !== null) selected = n.parent;
    else if (e.key === 'ArrowDown' && kids[selected].length) selected = kids[selected][0];
    else if (e.key === 'ArrowLeft' && at > 0) selected = sib[at - 1];
    else if (e.key === 'ArrowRight' && at < sib.length - 1) selected = sib[at + 1];
    else if (e.key === 'Enter') zoom = selected;
    else if (e.key === 'Escape') zoom = 0;
    else return;
    e.preventDefault();
    if (!path(selected).includes(zoom)) zoom = nodes[selected].parent ?? 0;
    draw();
  });
  search.addEventListener('input', () => {
    query = search.value.trim().toLowerCase();
    matches.clear();
    if (query)
      for (const n of nodes)
        if (n.id && `${n.label} ${n.filename ?? ''}`.toLowerCase().includes(query)) matches.add(n.id);
    draw();
  });
  new ResizeObserver(() => draw()).observe(canvas);
  draw();
}
