// The memory tree's DOM beside the icicle: breadcrumbs of the zoom, the selected frame's figures
// with its callees (or the search hits), and the hover card's text.
import type { TreeNode } from '../types';
import { bytes, bytesSpan, el, exact, int, pct } from '../ui/format';
import { pathTo } from './tree-layout';

/** Links from the root to the zoomed node; `go(id)` zooms there. */
export function crumbs(nodes: TreeNode[], zoom: number, go: (id: number) => void): Node[] {
  return pathTo(nodes, zoom).flatMap((id, i) => {
    const a = el('a', { href: '#', text: i === 0 ? 'all' : (nodes[id].name ?? nodes[id].label) });
    a.addEventListener('click', (e) => {
      e.preventDefault();
      go(id);
    });
    return i ? [el('span', { text: ' › ' }), a] : [a];
  });
}

/** The selected node's figures and a list of nodes (`pick(id)` selects one). */
export function sidePanel(
  nodes: TreeNode[],
  selected: number,
  list: number[],
  heading: string,
  pick: (id: number) => void,
) {
  const n = nodes[selected];
  const row = (id: number) => {
    const k = nodes[id];
    const a = el('a', { href: '#', text: k.label, title: k.filename ? `${k.filename}:${k.line} ${k.name}` : k.label });
    a.addEventListener('click', (e) => {
      e.preventDefault();
      pick(id);
    });
    return el(
      'tr',
      {},
      el('td', { class: 'label' }, a),
      el('td', { class: 'num' }, bytesSpan(k.total_bytes)),
      el('td', { class: 'num share', text: pct(k.share) }),
      el('td', { class: 'num blocks', text: int(k.blocks) }),
    );
  };
  const kv = (k: string, ...v: (Node | string)[]) => el('tr', {}, el('th', { text: k }), el('td', {}, ...v));
  return [
    el('h3', { text: n.label }),
    n.filename ? el('p', { class: 'loc', text: `${n.filename}:${n.line}` }) : '',
    el(
      'table',
      { class: 'kv' },
      kv('live bytes', bytesSpan(n.total_bytes), ` (${pct(n.share)} of all)`),
      kv('self bytes', bytesSpan(n.self_bytes)),
      kv('requested', bytesSpan(n.requested_bytes)),
      kv('blocks', `${int(n.blocks)} (${int(n.self_blocks)} here)`),
    ),
    el('h4', { text: heading }),
    el('table', { class: 'grid compact' }, el('tbody', {}, ...list.map(row))),
  ];
}

/** The hover card of a node. */
export function nodeTip(n: TreeNode): (Node | string)[] {
  return [
    el('b', { text: n.label }),
    el('div', { text: `${bytes(n.total_bytes)} (${exact(n.total_bytes)}) · ${pct(n.share)}` }),
    el('div', { text: `self ${bytes(n.self_bytes)} · ${int(n.blocks)} blocks` }),
    n.filename ? el('div', { class: 'loc', text: `${n.filename}:${n.line}` }) : '',
  ];
}
