// Drawing the memory tree's icicle: a colour per file (grey for synthetic frames), search hits in
// pink and the rest faded, the selection outlined, labels cut to fit.
import type { TreeNode } from '../generated/answers';
import { fitText } from '../ui/canvas';
import { bytes } from '../ui/format';
import { ROW, hue, type Box } from './tree-layout';

export interface IcicleScene {
  nodes: TreeNode[];
  boxes: Box[];
  selected: number;
  /** Search hits; null when there is no search. */
  matches: Set<number> | null;
}

function fill(n: TreeNode, s: IcicleScene): string {
  if (s.matches) return s.matches.has(n.id) ? 'hsl(330 80% 65%)' : 'hsl(0 0% 90%)';
  if (n.id === 0) return 'hsl(215 20% 75%)';
  if (n.filename === null) return 'hsl(0 0% 78%)';
  return `hsl(${hue(n.filename)} 60% ${68 - (n.depth % 3) * 5}%)`;
}

export function drawIcicle(g: CanvasRenderingContext2D, s: IcicleScene) {
  g.font = '12px system-ui, sans-serif';
  for (const b of s.boxes) {
    const n = s.nodes[b.id];
    g.fillStyle = fill(n, s);
    g.fillRect(b.x, b.y, Math.max(0.5, b.w - 0.5), ROW - 1);
    if (b.id === s.selected) {
      g.strokeStyle = '#0f172a';
      g.lineWidth = 2;
      g.strokeRect(b.x + 1, b.y + 1, Math.max(1, b.w - 2), ROW - 3);
    }
    if (b.w > 36) {
      g.fillStyle = '#0f172a';
      g.fillText(fitText(g, `${n.label} · ${bytes(n.total_bytes)}`, b.w - 8), b.x + 4, b.y + 14);
    }
  }
}
