// A table of memory grouped by stack: share bar, bytes, blocks, and the stack's label (the frame
// that names it) with its caller as a second line; click the label for every frame of the stack.
import type { Group, Merged, StackBytes } from '../generated/answers';
import { bytesSpan, clip, clipLines, el, int, pct, plural, shortCpp } from './format';

/**
 * The stacks a merged row holds (the engine's list, largest first): each one's bytes, blocks and
 * how it is called, and one line for those not listed, so the lines add up to the row.
 */
function mergedList(m: Merged): HTMLElement {
  const rows = m.stacks.map((s) =>
    el(
      'tr',
      {},
      el('td', { class: 'num' }, bytesSpan(s.bytes)),
      el('td', { class: 'num', text: int(s.blocks) }),
      el('td', { class: s.detail ? '' : 'muted', text: s.detail ? clip(shortCpp(s.detail)) : 'no calling frame' }),
    ),
  );
  if (m.more)
    rows.push(
      el(
        'tr',
        { class: 'more' },
        el('td', { class: 'num' }, bytesSpan(m.more_bytes)),
        el('td', { class: 'num', text: int(m.more_blocks) }),
        el('td', { class: 'muted', text: `… ${plural(m.more, 'more stack')}` }),
      ),
    );
  return el(
    'table',
    { class: 'grid compact merged-stacks' },
    el('thead', {}, el('tr', {}, ...['bytes', 'blocks', 'stack, called from'].map((h) => el('th', { text: h })))),
    el('tbody', {}, ...rows),
  );
}

/**
 * The label cell of a stack: `label` with `detail` as a muted second line and `site` on hover; a
 * click shows or hides the whole stack (outermost first). Synthetic groups have no stack to open.
 */
export function stackLabel(g: {
  label: string;
  detail: string | null;
  site?: string | null;
  stack: string | null;
  merged?: Merged | null;
}): HTMLElement {
  const title = clip(g.site ?? g.stack?.slice(g.stack.lastIndexOf('\n') + 1) ?? g.label, 2000);
  // C++ names with their template arguments folded (the whole stack one click away).
  const label = clip(shortCpp(g.label));
  const detail = g.detail ? el('span', { class: 'detail', text: clip(shortCpp(g.detail)) }) : null;
  if (!g.stack) return el('div', { class: 'label-cell' }, el('span', { class: 'label', title, text: label }), detail);
  const frames = el('pre', { class: 'stack-text', text: clipLines(g.stack) });
  // A merged row opens on every stack it holds, then the frames of its largest.
  const full = g.merged
    ? el(
        'div',
        { class: 'merged', hidden: true },
        mergedList(g.merged),
        el('div', { class: 'muted', text: 'frames of the largest stack:' }),
        frames,
      )
    : frames;
  full.hidden = true;
  const hint = g.merged ? 'click for its stacks and the frames of the largest' : 'click for all frames';
  const a = el('a', { href: '#', class: 'label', title: `${title}\n(${hint})`, text: label });
  a.addEventListener('click', (e) => {
    e.preventDefault();
    full.hidden = !full.hidden;
  });
  return el('div', { class: 'label-cell' }, a, detail, full);
}

export function groupTable(groups: (Group | StackBytes)[], total: number): HTMLElement {
  const body = el('tbody');
  for (const g of groups) {
    const share = total > 0 ? g.bytes / total : 0;
    body.append(
      el(
        'tr',
        {},
        el('td', { class: 'share' }, el('div', { class: 'sharebar', style: `width:${pct(share)}` }), pct(share)),
        el('td', { class: 'num' }, bytesSpan(g.bytes)),
        el('td', { class: 'num', text: int(g.blocks) }),
        el('td', {}, stackLabel(g)),
      ),
    );
  }
  // Memory from before the window is known by where it was freed, if at all: not an allocation site.
  const allDynamic = groups.every((g) => !('origin' in g) || g.origin !== 'before_window');
  const where = allDynamic ? 'allocation site (click for all frames)' : 'where (click for all frames)';
  return el(
    'table',
    { class: 'grid groups' },
    el('thead', {}, el('tr', {}, ...['share', 'bytes', 'blocks', where].map((h) => el('th', { text: h })))),
    body,
  );
}
