// The memory tree's DOM beside the icicle: breadcrumbs of the zoom, the selected frame's figures
// with its callees (or the search hits), and the hover card's text.
import type { TreeNode } from '../generated/answers';
import { bytes, bytesSpan, clip, el, exact, int, pct } from '../ui/format';
import { pathTo } from './tree-layout';

/** Crumbs kept around an ellipsis when the zoom is deep (a 100k-frame stack). */
const CRUMBS_HEAD = 2;
const CRUMBS_TAIL = 8;

/** Links from the root to the zoomed node (the first and last few when deep); `go(id)` zooms there. */
export function crumbs(nodes: TreeNode[], zoom: number, go: (id: number) => void): Node[] {
  const path = pathTo(nodes, zoom);
  const shown: (number | null)[] =
    path.length > CRUMBS_HEAD + CRUMBS_TAIL + 1
      ? [...path.slice(0, CRUMBS_HEAD), null, ...path.slice(-CRUMBS_TAIL)]
      : path;
  return shown.flatMap((id, i) => {
    const sep = i ? [el('span', { text: ' › ' })] : [];
    if (id === null)
      return [...sep, el('span', { class: 'muted', text: `… ${int(path.length - shown.length + 1)} more` })];
    const a = el('a', { href: '#', text: id === 0 ? 'all' : clip(nodes[id].name ?? nodes[id].label, 80) });
    a.addEventListener('click', (e) => {
      e.preventDefault();
      go(id);
    });
    return [...sep, a];
  });
}

/** A frame's full location for a title, bounded (names may be 1M characters). */
const where = (k: TreeNode) => clip(k.filename ? `${k.filename}:${k.line} ${k.name}` : k.label, 2000);

/** Rows in the side list: a frame may have thousands of callees. */
const MAX_LIST = 500;

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
    const a = el('a', { href: '#', text: clip(k.label), title: where(k) });
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
    el('h3', { text: clip(n.label), title: where(n) }),
    n.filename ? el('p', { class: 'loc', text: clip(`${n.filename}:${n.line}`) }) : '',
    el(
      'table',
      { class: 'kv' },
      kv('live bytes', bytesSpan(n.total_bytes), ` (${pct(n.share)} of all)`),
      kv('self bytes', bytesSpan(n.self_bytes)),
      kv('requested', bytesSpan(n.requested_bytes)),
      kv('blocks', `${int(n.blocks)} (${int(n.self_blocks)} here)`),
    ),
    el('h4', { text: heading }),
    el('table', { class: 'grid compact' }, el('tbody', {}, ...list.slice(0, MAX_LIST).map(row))),
    list.length > MAX_LIST ? el('p', { class: 'muted', text: `${int(list.length - MAX_LIST)} more not listed` }) : '',
  ];
}

/** The hover card of a node. */
export function nodeTip(n: TreeNode): (Node | string)[] {
  return [
    el('b', { text: clip(n.label) }),
    el('div', { text: `${bytes(n.total_bytes)} (${exact(n.total_bytes)}) · ${pct(n.share)}` }),
    el('div', { text: `self ${bytes(n.self_bytes)} · ${int(n.blocks)} blocks` }),
    n.filename ? el('div', { class: 'loc', text: clip(`${n.filename}:${n.line}`) }) : '',
  ];
}
