// Categories: what the live memory is (parameters, gradients, optimizer state, activations…) at
// the allocated peak or the selected event, as the engine's category rules decide it: a stacked
// share bar, then per category its bytes, the rules that decided it (and why) and its top sites.
// Below, the rules in the order they are tried and an editor for a TOML rules file.
import type { OpenFile, ViewContext } from '../app-types';
import type { CategoryBreakdown, CategoryShare, LifetimeRule, RuleInfo } from '../generated/answers';
import { EngineFailure } from '../client';
import { bytesSpan, clip, el, eventLabel, gridTable, int, pct, plural } from '../ui/format';
import { categoryColor, categoryInk } from '../ui/categories-palette';
import { focusAt, focusSwitch } from './focus';
import { revealPanel, takePanel, withDocLinks } from './doc-panels';
import { shareSegments } from './categories-layout';

/** The rules text last applied to each open file (kept across renders of the view). */
const applied = new WeakMap<OpenFile, string>();

/** Every lifetime condition a rule may name: tsc fails when the engine's type gains or loses one. */
const LIFETIMES = {
  any: 0,
  within_phase: 0,
  outlives_phase: 0,
  into_backward: 0,
  outlives_steps: 0,
  before_window: 0,
  at_oom: 0,
  at_dump: 0,
  kept: 0,
  grown_by_copy: 0,
  starts_cache: 0,
  pairs_with_gradient: 0,
  persistent: 0,
} satisfies Record<LifetimeRule, 0>;

const EXAMPLE = `# Rules tried before the defaults (first match wins). Example:
[[rule]]
name = "adam"
category = "adam state"
file = 'my_project/optim'      # regex on a frame's file
function = '^step$'            # regex on the same frame's function
lifetime = "outlives_phase"    # ${Object.keys(LIFETIMES).join(' | ')}
# size = [8519680]             # exact block sizes in bytes (optional)
# skip_wrappers = true         # frames around a module's forward do not count
why = "Adam's moments"
# replace_defaults = true      # (top level) use only these rules`;

const swatch = (name: string) => el('i', { class: 'swatch', style: `background:${categoryColor(name)}` });

/** The stacked bar of the shares: a label inside a segment only where it fits. */
function shareBar(b: CategoryBreakdown, width: number): HTMLElement {
  const g = document.createElement('canvas').getContext('2d');
  const measure = (s: string) => (g ? ((g.font = '12px system-ui, sans-serif'), g.measureText(s).width) : s.length * 7);
  const bar = el('div', { class: 'catbar', role: 'img', 'aria-label': 'shares of the active memory by category' });
  for (const s of shareSegments(b.categories, width, measure)) {
    const cat = b.categories.find((x) => x.category === s.category)!;
    bar.append(
      el('div', {
        class: 'catseg',
        'data-category': s.category,
        style: `left:${s.left * 100}%;width:${s.width * 100}%;background:${categoryColor(s.category)};color:${categoryInk(s.category)}`,
        title: `${s.category}: ${pct(cat.share)} · ${int(cat.bytes)} B in ${plural(cat.blocks, 'block')}`,
        text: s.label,
      }),
    );
  }
  return bar;
}

function rulesCell(x: CategoryShare): HTMLElement {
  return el(
    'ul',
    { class: 'why' },
    ...x.rules.map((r) =>
      el(
        'li',
        {},
        el('code', { text: r.rule }),
        x.rules.length > 1 ? el('span', { class: 'muted' }, ' · ', bytesSpan(r.bytes)) : '',
        el('div', { class: 'detail', text: clip(r.why, 400) }),
        r.advice ? el('div', { class: 'detail advice', text: `try: ${clip(r.advice, 400)}` }) : '',
      ),
    ),
  );
}

function sitesCell(x: CategoryShare): HTMLElement {
  return el(
    'ul',
    { class: 'sites' },
    ...x.top_sites.map((s) =>
      el(
        'li',
        { title: `${plural(s.blocks, 'block')}` },
        el('span', { class: 'site', text: clip(s.label, 160) }),
        ' ',
        bytesSpan(s.bytes, 'muted'),
      ),
    ),
  );
}

function categoryTable(b: CategoryBreakdown): HTMLElement {
  const rows = b.categories.map((x) =>
    el(
      'tr',
      { 'data-category': x.category },
      el('td', { class: 'cat' }, swatch(x.category), el('b', { text: x.category })),
      el('td', { class: 'num', 'data-bytes': x.bytes }, bytesSpan(x.bytes)),
      el('td', { class: 'num', text: pct(x.share) }),
      el('td', { class: 'num', text: int(x.blocks) }),
      el('td', {}, rulesCell(x)),
      el('td', {}, sitesCell(x)),
    ),
  );
  return gridTable(
    ['category', 'bytes', 'share', 'blocks', 'why this category (deciding rules)', 'top allocation sites'],
    rows,
    'grid categories',
  );
}

function pattern(r: RuleInfo): HTMLElement {
  const parts: (Node | string)[] = [];
  if (r.file) parts.push('file ', el('code', { text: r.file }));
  if (r.function) parts.push(parts.length ? ' · ' : '', 'function ', el('code', { text: r.function }));
  if (!parts.length) parts.push(el('span', { class: 'muted', text: 'any frame' }));
  if (r.file || r.function)
    parts.push(
      el('span', { class: 'muted', text: ` (${r.frames} frames${r.skip_wrappers ? ', not around a module' : ''})` }),
    );
  if (r.sizes.length) parts.push(' · size ', el('code', { text: r.sizes.map((b) => `${int(b)} B`).join(', ') }));
  return el('span', {}, ...parts);
}

function rulesTable(rules: RuleInfo[]): HTMLElement {
  const rows = rules.map((r, i) =>
    el(
      'tr',
      { class: r.origin === 'user' ? 'user-rule' : '', title: r.why },
      el('td', { class: 'num', text: String(i + 1) }),
      el('td', {}, el('code', { text: r.name })),
      el('td', { class: 'cat' }, swatch(r.category), r.category),
      el('td', { class: 'pattern' }, pattern(r)),
      el('td', { text: r.phase ?? 'any' }),
      el('td', { text: r.lifetime.replace(/_/g, ' ') }),
      el('td', { text: r.origin }),
    ),
  );
  return gridTable(['#', 'rule', 'category', 'matches', 'phase', 'lifetime', 'origin'], rows, 'grid compact rules');
}

/** The rules list and the editor; `rerender` shows the view again after the rules changed. */
async function rulesEditor(c: ViewContext): Promise<HTMLElement> {
  const rules = await c.file.client.call('categoryRules');
  const users = rules.filter((r) => r.origin === 'user').length;
  const text = el('textarea', {
    class: 'rules-text',
    rows: 9,
    spellcheck: 'false',
    placeholder: EXAMPLE,
    'aria-label': 'category rules (TOML)',
  });
  text.value = applied.get(c.file) ?? '';
  const error = el('div', { class: 'rules-error', role: 'alert', hidden: true });
  const apply = el('button', { class: 'primary', text: 'Apply' });
  const reset = el('button', { text: 'Reset to defaults', disabled: users === 0 && !applied.get(c.file) });
  const send = async (t: string) => {
    error.hidden = true;
    apply.disabled = reset.disabled = true;
    try {
      await c.file.client.call('setCategoryRules', t);
      if (t.trim()) applied.set(c.file, t);
      else applied.delete(c.file);
      c.app.show('categories');
    } catch (e) {
      const info = e instanceof EngineFailure ? e.info : { code: 'ERROR', message: String(e), hint: '' };
      error.replaceChildren(
        el('strong', { text: 'The rules were not applied: ' }),
        el('span', { class: 'msg' }, ...withDocLinks(c, info.message)),
        info.hint ? el('div', { class: 'hint' }, ...withDocLinks(c, info.hint)) : '',
      );
      error.hidden = false;
      apply.disabled = false;
      reset.disabled = users === 0 && !applied.get(c.file);
    }
  };
  apply.addEventListener('click', () => void send(text.value));
  reset.addEventListener('click', () => {
    text.value = '';
    void send('');
  });
  const section = el(
    'section',
    { class: 'rules-editor', id: 'category-rules' },
    el('h3', { text: 'Category rules' }),
    el('p', {
      class: 'muted',
      text: `${plural(rules.length, 'rule')}${users ? ` (${int(users)} of yours first)` : ''}, tried in this order on each live block: the first that matches decides its category; blocks no rule matches are “unknown”.`,
    }),
    el(
      'details',
      { class: 'rules-list', open: true },
      el('summary', { text: `The ${plural(rules.length, 'rule')} in order` }),
      rulesTable(rules),
    ),
    el(
      'p',
      {},
      'Your rules (TOML, ',
      el('code', { text: '[[rule]]' }),
      ' tables: name, category, file, function, frames, phase, lifetime, why). They are tried before the defaults unless the file says ',
      el('code', { text: 'replace_defaults = true' }),
      '.',
    ),
    text,
    el('div', { class: 'actions' }, apply, reset),
    error,
  );
  if (takePanel('categories')) revealPanel(section);
  return section;
}

export async function renderCategories(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  const b = await c.file.client.analyze('categories', c.device, focusAt(c));
  const peak = d.events ? d.peaks.allocated.event : null;
  const isPeak = b.event !== null && b.event === peak;
  const evInput = el('input', {
    type: 'number',
    min: 0,
    max: Math.max(0, d.events - 1),
    value: b.event ?? '',
    placeholder: 'event',
    class: 'event-input',
  });
  const go = el('button', { text: 'Show' });
  go.addEventListener('click', () => c.app.select(evInput.value === '' ? null : Number(evInput.value), 'categories'));
  c.root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('b', {
        text: !d.events
          ? 'What the memory is at the dump (this device has no trace events)'
          : b.event === null
            ? // The trace's peak lies before its first event (it starts after the memory was allocated).
              'What the memory is at the allocated peak (window start)'
            : isPeak
              ? `What the memory is at the allocated peak (${eventLabel(b.event)})`
              : `What the memory is after the selected ${eventLabel(b.event)}`,
      }),
      el('span', { class: 'spacer' }),
      focusSwitch(c, 'categories'),
      d.events ? evInput : '',
      d.events ? go : '',
    ),
  );
  if (b.finding) c.root.append(el('p', { class: 'cat-finding' }, ...withDocLinks(c, b.finding)));
  c.root.append(
    el(
      'p',
      { class: 'cat-total' },
      'Active memory ',
      el('span', { class: 'cat-active', 'data-bytes': b.active }, bytesSpan(b.active)),
      `: ${plural(b.categories.length, 'category', 'categories')}, whose bytes sum to it.`,
    ),
  );
  if (b.categories.length) {
    const width = Math.max(300, c.root.clientWidth || 1200);
    c.root.append(
      shareBar(b, width),
      el(
        'div',
        { class: 'legend' },
        ...b.categories.map((x) => el('span', {}, swatch(x.category), `${x.category} ${pct(x.share)}`)),
      ),
      categoryTable(b),
    );
  } else {
    c.root.append(
      el('div', { class: 'health info', text: 'No memory is active here: there is nothing to categorize.' }),
    );
  }
  c.root.append(await rulesEditor(c));
}
