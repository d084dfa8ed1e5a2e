// Memory tree geometry and navigation (pure: no DOM; tests/unit): children by size, the icicle
// rectangles of the zoomed subtree, hit-testing, paths, keyboard moves and search.
import type { TreeNode } from '../types';

/** Height of one row of the icicle, CSS pixels. */
export const ROW = 20;
/** Narrower children are left out of the drawing (their share of the parent stays empty). */
const MIN_WIDTH = 0.3;

export interface Box {
  id: number;
  x: number;
  w: number;
  y: number;
}

/** Each node's children, largest first. Node ids are indices into `nodes`. */
export function childrenOf(nodes: TreeNode[]): number[][] {
  const kids: number[][] = nodes.map(() => []);
  for (const n of nodes) if (n.parent !== null) kids[n.parent].push(n.id);
  for (const k of kids) k.sort((a, b) => nodes[b].total_bytes - nodes[a].total_bytes);
  return kids;
}

/**
 * The icicle of the subtree at `zoom`, `width` pixels wide: one row per depth, each child as wide as
 * its share of its parent's bytes, laid left to right from the parent's left edge.
 */
export function icicle(nodes: TreeNode[], kids: number[][], zoom: number, width: number): Box[] {
  const boxes: Box[] = [];
  const base = nodes[zoom].depth;
  const place = (id: number, x: number, w: number) => {
    boxes.push({ id, x, w, y: (nodes[id].depth - base) * ROW });
    let cx = x;
    for (const k of kids[id]) {
      const kw = (nodes[k].total_bytes / Math.max(1, nodes[id].total_bytes)) * w;
      if (kw >= MIN_WIDTH) place(k, cx, kw);
      cx += kw;
    }
  };
  place(zoom, 0, width);
  return boxes;
}

/** Canvas height for the subtree at `zoom`: its deepest row of the whole tree, plus a margin. */
export function icicleHeight(nodes: TreeNode[], zoom: number): number {
  const maxDepth = nodes.reduce((m, n) => Math.max(m, n.depth), 0);
  return (maxDepth - nodes[zoom].depth + 1) * ROW + 4;
}

export function boxAt(boxes: Box[], x: number, y: number): Box | undefined {
  return boxes.find((b) => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW);
}

/** Ids from the root down to `id`. */
export function pathTo(nodes: TreeNode[], id: number): number[] {
  const p: number[] = [];
  for (let x: number | null = id; x !== null; x = nodes[x].parent) p.unshift(x);
  return p;
}

export interface Focus {
  selected: number;
  zoom: number;
}

/** A click on a box selects it and zooms into it, or out to its parent when it is the zoom. */
export function clickBox(nodes: TreeNode[], zoom: number, id: number): Focus {
  return { selected: id, zoom: id === zoom ? (nodes[id].parent ?? 0) : id };
}

/**
 * The focus after a key: ↑ parent, ↓ largest child, ←/→ siblings, Enter zooms into the selection,
 * Esc zooms out to the root; the zoom follows a selection that leaves it. Null for other keys.
 */
export function navigate(nodes: TreeNode[], kids: number[][], f: Focus, key: string): Focus | null {
  let { selected, zoom } = f;
  const n = nodes[selected];
  const sib = n.parent === null ? [selected] : kids[n.parent];
  const at = sib.indexOf(selected);
  if (key === 'ArrowUp' && n.parent !== null) selected = n.parent;
  else if (key === 'ArrowDown' && kids[selected].length) selected = kids[selected][0];
  else if (key === 'ArrowLeft' && at > 0) selected = sib[at - 1];
  else if (key === 'ArrowRight' && at < sib.length - 1) selected = sib[at + 1];
  else if (key === 'Enter') zoom = selected;
  else if (key === 'Escape') zoom = 0;
  else return null;
  if (!pathTo(nodes, selected).includes(zoom)) zoom = nodes[selected].parent ?? 0;
  return { selected, zoom };
}

/** Nodes (not the root) whose label or file contains `query`, case-insensitively; none for "". */
export function search(nodes: TreeNode[], query: string): Set<number> {
  const q = query.trim().toLowerCase();
  const found = new Set<number>();
  if (q) for (const n of nodes) if (n.id && `${n.label} ${n.filename ?? ''}`.toLowerCase().includes(q)) found.add(n.id);
  return found;
}

/** A stable hue per file name, so a file keeps its colour across events. */
export function hue(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return Math.abs(h) % 360;
}
