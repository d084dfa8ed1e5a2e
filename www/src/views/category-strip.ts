// A compact category bar with its legend, for the views that show categories beside their own
// subject (Peak, Memory tree, Leaks): one segment per category, as wide as its bytes' part of the
// total the engine says they sum to, in the engine's order and the palette's colors. Optionally a
// click on a segment or a legend entry opens the Categories view (`pick`).
import { bytes, el, int, pct, plural } from '../ui/format';
import { categoryColor, categoryInk } from '../ui/categories-palette';
import { byteShares, shareSegments } from './categories-layout';

export interface StripPart {
  category: string;
  bytes: number;
  blocks: number;
}

export interface StripOptions {
  /** What the bar shows, for screen readers ("live memory by category"). */
  label: string;
  /** The bar's width in px, for which labels fit inside their segment. */
  width: number;
  /** A click on a category (segment or legend entry); none: the strip is not clickable. */
  pick?: (category: string) => void;
  /** The hover text of a clickable category, after its figures. */
  pickHint?: string;
}

let measurer: CanvasRenderingContext2D | null | undefined;
function measure(s: string): number {
  measurer ??= document.createElement('canvas').getContext('2d');
  if (!measurer) return s.length * 7;
  measurer.font = '12px system-ui, sans-serif';
  return measurer.measureText(s).width;
}

/** The strip of `parts`, whose bytes sum to `total`; an empty element when nothing is there. */
export function categoryStrip(parts: StripPart[], total: number, o: StripOptions): HTMLElement {
  const shares = byteShares(parts, total);
  const tip = (p: StripPart & { share: number }) =>
    `${p.category}: ${pct(p.share)} · ${bytes(p.bytes)} in ${plural(p.blocks, 'block')}` +
    (o.pick ? `\n${o.pickHint ?? 'click to open it in the Categories view'}` : '');
  const bar = el('div', { class: 'catbar thin', role: 'img', 'aria-label': o.label });
  for (const s of shareSegments(shares, Math.max(200, o.width), measure)) {
    const p = shares.find((x) => x.category === s.category)!;
    const seg = el('div', {
      class: o.pick ? 'catseg pickable' : 'catseg',
      'data-category': s.category,
      style: `left:${s.left * 100}%;width:${s.width * 100}%;background:${categoryColor(s.category)};color:${categoryInk(s.category)}`,
      title: tip(p),
      text: s.label,
    });
    if (o.pick) seg.addEventListener('click', () => o.pick!(s.category));
    bar.append(seg);
  }
  const legend = el(
    'div',
    { class: 'legend cat-legend' },
    ...shares
      .filter((p) => p.bytes > 0)
      .map((p) => {
        const body = [
          el('i', { class: 'swatch', style: `background:${categoryColor(p.category)}` }),
          el('b', { text: p.category }),
          ` ${pct(p.share)} · `,
          el('span', { class: 'bytes', title: `${int(p.bytes)} B`, text: bytes(p.bytes) }),
        ];
        if (!o.pick) return el('span', { 'data-category': p.category, title: tip(p) }, ...body);
        const a = el('a', { href: '#', 'data-category': p.category, title: tip(p) }, ...body);
        a.addEventListener('click', (e) => {
          e.preventDefault();
          o.pick!(p.category);
        });
        return a;
      }),
  );
  // All "unknown" (a dump without stacks, or code no rule knows): say so rather than show a bare bar.
  const none = shares.every((p) => p.category === 'unknown' || p.bytes === 0);
  const note = none
    ? el('span', {
        class: 'muted cat-none',
        text: ' no category rule matched these blocks (the rules read their stacks)',
      })
    : '';
  legend.append(note);
  return el('div', { class: 'cat-strip' }, bar, legend);
}
