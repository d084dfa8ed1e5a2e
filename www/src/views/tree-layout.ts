// Memory tree geometry and navigation (pure: no DOM; tests/unit): children by size, the icicle
// rectangles of the zoomed subtree, hit-testing, paths, keyboard moves and search.
import type { TreeNode } from '../generated/answers';

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
 * Rows drawn below the zoom: a 100k-frame stack would make a canvas 2M pixels high (beyond what a
 * browser allocates). Deeper frames are reached by zooming in (click, Enter, the side list).
 */
export const MAX_ROWS = 200;

/**
 * The icicle of the subtree at `zoom`, `width` pixels wide: one row per depth (at most MAX_ROWS),
 * each child as wide as its share of its parent's bytes, laid left to right from the parent's left
 * edge. Iterative (an explicit stack, parents before children): stacks 100k frames deep would
 * overflow the call stack of a recursive walk.
 */
export function icicle(nodes: TreeNode[], kids: number[][], zoom: number, width: number): Box[] {
  const boxes: Box[] = [];
  const base = nodes[zoom].depth;
  const todo: [number, number, number][] = [[zoom, 0, width]];
  while (todo.length) {
    const [id, x, w] = todo.pop()!;
    const row = nodes[id].depth - base;
    boxes.push({ id, x, w, y: row * ROW });
    if (row + 1 >= MAX_ROWS) continue;
    const placed: [number, number, number][] = [];
    let cx = x;
    for (const k of kids[id]) {
      const kw = (nodes[k].total_bytes / Math.max(1, nodes[id].total_bytes)) * w;
      if (kw >= MIN_WIDTH) placed.push([k, cx, kw]);
      cx += kw;
    }
    // Reversed onto the stack, so that boxes come out in the order of a depth-first walk.
    for (let i = placed.length - 1; i >= 0; i--) todo.push(placed[i]);
  }
  return boxes;
}

/** Levels of the subtree at `zoom` (its deepest row of the whole tree), drawn or not. */
export function levelsBelow(nodes: TreeNode[], zoom: number): number {
  const maxDepth = nodes.reduce((m, n) => Math.max(m, n.depth), 0);
  return maxDepth - nodes[zoom].depth + 1;
}

/** Canvas height for the subtree at `zoom`: its levels up to MAX_ROWS, plus a margin. */
export function icicleHeight(nodes: TreeNode[], zoom: number): number {
  return Math.min(MAX_ROWS, levelsBelow(nodes, zoom)) * ROW + 4;
}

export function boxAt(boxes: Box[], x: number, y: number): Box | undefined {
  return boxes.find((b) => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW);
}

/** Ids from the root down to `id`. */
export function pathTo(nodes: TreeNode[], id: number): number[] {
  const p: number[] = [];
  // push + reverse: unshift moves the whole array each time (quadratic on a 100k-frame stack).
  for (let x: number | null = id; x !== null; x = nodes[x].parent) p.push(x);
  return p.reverse();
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
  // Below the drawn rows: zoom to the parent so that the selection stays in sight.
  if (nodes[selected].depth - nodes[zoom].depth >= MAX_ROWS) zoom = nodes[selected].parent ?? 0;
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
  // The first 256 characters: every box hashes its file on each draw, and names may be 1M long.
  for (let i = 0; i < Math.min(s.length, 256); i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return Math.abs(h) % 360;
}
