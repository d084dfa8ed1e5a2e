// A table of memory grouped by stack: share bar, bytes, blocks, site; click a row for the stack.
import type { Group, StackBytes } from '../types';
import { bytesSpan, el, int, pct } from './format';

export function groupTable(groups: (Group | StackBytes)[], total: number): HTMLElement {
  const body = el('tbody');
  for (const g of groups) {
    const share = total > 0 ? g.bytes / total : 0;
    const full = el('pre', { class: 'stack-text', hidden: true, text: g.label });
    const site = el('a', { href: '#', text: g.site ?? g.label.split('\n').pop() ?? g.label });
    site.addEventListener('click', (e) => {
      e.preventDefault();
      full.hidden = !full.hidden;
    });
    body.append(
      el(
        'tr',
        {},
        el('td', { class: 'share' }, el('div', { class: 'sharebar', style: `width:${pct(share)}` }), pct(share)),
        el('td', { class: 'num' }, bytesSpan(g.bytes)),
        el('td', { class: 'num', text: int(g.blocks) }),
        el('td', {}, site, full),
      ),
    );
  }
  return el(
    'table',
    { class: 'grid groups' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['share', 'bytes', 'blocks', 'allocation site (click for the whole stack)'].map((h) =>
          el('th', { text: h }),
        ),
      ),
    ),
    body,
  );
}
