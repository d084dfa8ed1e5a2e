// The page's own documentation panels, for engine texts that name the project's docs: a user of
// the page has no docs/ folder, so "docs/schema.md" opens the Queries view's schema panel (the
// tables and columns, from the engine's own declarations) and "docs/categories.md" the Categories
// view's rules (the rules in order, and the editor).
import type { ViewContext } from '../app-types';
import { el } from '../ui/format';

export type DocPanel = 'schema' | 'categories';

const VIEW_OF: Record<DocPanel, 'queries' | 'categories'> = { schema: 'queries', categories: 'categories' };
const NAME: Record<DocPanel, string> = { schema: 'the tables and columns', categories: 'the category rules' };

/** The panel the next render of its view opens and scrolls to. */
let wanted: DocPanel | null = null;

/** Show `panel` in its view (switching to it when another view is shown). */
export function openPanel(c: ViewContext, panel: DocPanel) {
  wanted = panel;
  c.app.show(VIEW_OF[panel]);
}

/** Whether the view being drawn was asked to open `panel` (asked once). */
export function takePanel(panel: DocPanel): boolean {
  const yes = wanted === panel;
  if (yes) wanted = null;
  return yes;
}

/** Open and scroll to a panel element once it is in the page. */
export function revealPanel(node: HTMLElement) {
  if (node instanceof HTMLDetailsElement) node.open = true;
  requestAnimationFrame(() => node.scrollIntoView({ block: 'start' }));
}

/**
 * `text` with each "docs/schema.md" or "docs/categories.md" made a link to the page's panel of
 * that name (the text reads "the tables and columns" / "the category rules" there).
 */
export function withDocLinks(c: ViewContext, text: string): (Node | string)[] {
  const out: (Node | string)[] = [];
  const re = /docs\/(schema|categories)\.md/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const panel = m[1] as DocPanel;
    out.push(text.slice(last, m.index));
    const a = el('a', { href: '#', class: 'doc-link', 'data-panel': panel, text: NAME[panel] });
    a.addEventListener('click', (e) => {
      e.preventDefault();
      openPanel(c, panel);
    });
    out.push(a);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out.filter((x) => x !== '');
}
