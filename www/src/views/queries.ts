// Queries: a form per template from the engine's catalogue, and a read-only SQL console. Results
// appear in a virtualised table with units, exportable as CSV or JSON.
import type { ViewContext } from '../app-types';
import type { EngineAnswers, TableDoc, Template } from '../generated/answers';
import { bytes, download, el, exact, gridTable, int, plural } from '../ui/format';
import { revealPanel, takePanel, withDocLinks } from './doc-panels';
import { toCsv } from '../ui/csv';

const EXAMPLE_SQL = `-- The 20 largest blocks alive at the dump, with the frame that names their stack
-- (label: the innermost user frame; caller: the next Python frame; text: every frame)
SELECT b.size, b.requested_size, cs.label, cs.caller, cs.text AS stack
FROM blocks b
LEFT JOIN call_stacks cs ON cs.id = b.stack_id
WHERE b.state = 'active_allocated'
ORDER BY b.size DESC
LIMIT 20`;

/** An SQL column that holds event indices (no unit comes with SQL results): `event`, `alloc_event`, `trace_index`… */
const EVENT_COLUMN = /(^|_)(event|trace_index)$|event_?id$|eventid$/i;

/**
 * A cell's text as shown: bytes in units, counts and event indices with separators, the rest as
 * is. `column` names an SQL result's column, whose event indices are told by their name.
 */
export function cellText(v: unknown, unit: string | null | undefined, column = ''): string {
  if (v === null) return 'NULL';
  if (typeof v === 'number' && unit === 'bytes') return bytes(v);
  if (typeof v === 'number' && Number.isInteger(v) && (unit === 'count' || unit === 'event')) return int(v);
  if (typeof v === 'number' && Number.isInteger(v) && !unit && EVENT_COLUMN.test(column)) return int(v);
  return String(v);
}

/** How many columns (of `widths`) end past the right edge of a view `viewWidth` wide scrolled to `left`. */
export function columnsRightOf(widths: number[], left: number, viewWidth: number): number {
  let edge = 0;
  let n = 0;
  for (const w of widths) {
    edge += w;
    if (edge > left + viewWidth + 1) n++;
  }
  return n;
}

/** Column widths in px from the header and the first rows' text (7.6 px a character, 70..560). */
export function columnWidths(
  columns: string[],
  rows: unknown[][],
  units: Record<string, string | null> = {},
): number[] {
  return columns.map((c, i) => {
    let chars = (units[c] ? `${c} [${units[c]}]` : c).length + 2;
    for (const r of rows.slice(0, 300)) chars = Math.max(chars, cellText(r[i], units[c], c).length);
    return Math.round(Math.max(70, Math.min(560, chars * 7.6 + 22)));
  });
}

/**
 * A table that renders only the rows in view, so 100 000 rows scroll smoothly. Columns are as wide
 * as their content (up to a limit), cut with an ellipsis and the full value on hover; drag a
 * header's right edge to resize its column.
 */
export function resultTable(rows: EngineAnswers['sql'], units: Record<string, string | null> = {}): HTMLElement {
  const ROW_H = 24;
  const box = el('div', { class: 'result-box' });
  const widths = columnWidths(rows.columns, rows.rows, units);
  const body = el('div', { class: 'result-body' });
  const spacer = el('div', { style: `height:${rows.rows.length * ROW_H}px;position:relative` });
  // Columns past the right edge: a hint above the header that scrolls to them.
  const moreBtn = el('button', { type: 'button' });
  const more = el('div', { class: 'result-more', hidden: true }, moreBtn);
  moreBtn.addEventListener('click', () => box.scrollBy({ left: Math.max(100, box.clientWidth * 0.8) }));
  const hint = () => {
    const n = box.clientWidth ? columnsRightOf(widths, box.scrollLeft, box.clientWidth) : 0;
    more.hidden = n === 0;
    moreBtn.textContent = `${plural(n, 'more column')} →`;
  };
  const layout = () => {
    const total = widths.reduce((a, b) => a + b, 0);
    // The last column takes the room left over.
    box.style.setProperty(
      '--tpl',
      widths.map((w, i) => (i === widths.length - 1 ? `minmax(${w}px, 1fr)` : `${w}px`)).join(' '),
    );
    for (const x of [head, body]) x.style.minWidth = `${total}px`;
    hint();
  };
  const head = el(
    'div',
    { class: 'result-head' },
    ...rows.columns.map((c, i) => {
      const handle = el('span', { class: 'col-resize', title: 'drag to resize' });
      handle.addEventListener('mousedown', (e) => {
        e.preventDefault();
        const [x0, w0] = [e.clientX, widths[i]];
        const move = (m: MouseEvent) => {
          widths[i] = Math.max(40, w0 + m.clientX - x0);
          layout();
        };
        const up = () => {
          window.removeEventListener('mousemove', move);
          window.removeEventListener('mouseup', up);
        };
        window.addEventListener('mousemove', move);
        window.addEventListener('mouseup', up);
      });
      return el(
        'div',
        { class: 'cell', title: units[c] ? `${c} (${units[c]})` : c },
        units[c] ? `${c} [${units[c]}]` : c,
        handle,
      );
    }),
  );
  body.append(spacer);
  const fmt = (v: unknown, col: string) => {
    if (v === null) return el('span', { class: 'null', text: 'NULL' });
    const text = cellText(v, units[col], col);
    const title = typeof v === 'number' && units[col] === 'bytes' ? exact(v) : String(v).slice(0, 4000);
    return el('span', { title, text });
  };
  const paint = () => {
    const top = body.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H) - 5);
    const last = Math.min(rows.rows.length, first + Math.ceil((body.clientHeight || 480) / ROW_H) + 10);
    spacer.replaceChildren(
      ...rows.rows
        .slice(first, last)
        .map((r, k) =>
          el(
            'div',
            { class: 'result-row', style: `top:${(first + k) * ROW_H}px` },
            ...r.map((v, i) =>
              el('div', { class: typeof v === 'number' ? 'cell num' : 'cell' }, fmt(v, rows.columns[i])),
            ),
          ),
        ),
    );
  };
  body.addEventListener('scroll', paint);
  box.append(head, body);
  box.style.setProperty('--cols', String(rows.columns.length));
  box.addEventListener('scroll', hint);
  new ResizeObserver(hint).observe(box);
  layout();
  requestAnimationFrame(() => {
    paint();
    hint();
  });
  paint();
  return el('div', { class: 'result-wrap' }, more, box);
}

function exportButtons(rows: EngineAnswers['sql'], name: string) {
  const csv = el('button', { text: 'Export CSV' });
  csv.addEventListener('click', () => {
    download(`${name}.csv`, toCsv(rows.columns, rows.rows), 'text/csv');
  });
  const json = el('button', { text: 'Export JSON' });
  json.addEventListener('click', () => download(`${name}.json`, JSON.stringify(rows, null, 1), 'application/json'));
  return [csv, json];
}

export async function renderQueries(c: ViewContext) {
  const client = c.file.client;
  const out = el('div', { class: 'results' });
  const show = (
    rows: EngineAnswers['sql'],
    name: string,
    units: Record<string, string | null> = {},
    ms = 0,
    total?: number,
  ) => {
    const count =
      total !== undefined && total !== rows.returned
        ? `${int(rows.returned)} of ${plural(total, 'row')}`
        : plural(rows.returned, 'row');
    out.replaceChildren(
      el(
        'div',
        { class: 'toolbar' },
        el('span', { text: `${count}${rows.has_more ? ' (more exist; raise the limit)' : ''} · ${ms.toFixed(0)} ms` }),
        el('span', { class: 'spacer' }),
        ...exportButtons(rows, name),
      ),
      resultTable(rows, units),
    );
  };
  const fail = (e: unknown) =>
    out.replaceChildren(el('div', { class: 'health warn', text: e instanceof Error ? e.message : String(e) }));

  // The tables the console reads, and a link to them.
  let tables: TableDoc[] = [];
  try {
    tables = await client.call('schema');
  } catch {
    tables = [];
  }
  const schema = schemaPanel(tables);
  const schemaLink = el('a', { href: '#schema', class: 'doc-link', text: 'the tables and columns' });
  schemaLink.addEventListener('click', (e) => {
    e.preventDefault();
    revealPanel(schema);
  });
  // Templates from the engine's catalogue.
  let templates: Template[] = [];
  try {
    templates = await client.call('catalogue');
  } catch {
    templates = [];
  }
  const pick = el(
    'select',
    { class: 'template-select' },
    ...templates.map((t) =>
      el('option', { value: t.name, text: `${t.category} · ${t.name}`, selected: t.name === c.template }),
    ),
  );
  const form = el('form', { class: 'template-form' });
  const drawForm = () => {
    const t = templates.find((x) => x.name === pick.value) ?? templates[0];
    if (!t) return;
    c.app.setTemplate(t.name);
    form.replaceChildren(
      el('p', { class: 'muted' }, ...withDocLinks(c, t.description)),
      ...t.params.map((p) => {
        const input = p.choices
          ? el(
              'select',
              { name: p.name },
              ...p.choices.map((ch) => el('option', { value: ch, text: ch, selected: ch === p.default })),
            )
          : p.type === 'bool'
            ? el('input', { name: p.name, type: 'checkbox', checked: p.default === true })
            : el('input', {
                name: p.name,
                type: p.type === 'int' ? 'number' : 'text',
                value: p.default === null || p.default === undefined ? '' : String(p.default),
                placeholder: p.required ? 'required' : 'optional',
              });
        return el('label', { title: p.description }, el('span', { text: p.name }), input);
      }),
      el('button', { type: 'submit', class: 'primary', text: 'Run template' }),
    );
  };
  pick.addEventListener('change', drawForm);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const t = templates.find((x) => x.name === pick.value)!;
    const params: Record<string, unknown> = { device: c.device };
    for (const p of t.params) {
      const f = form.elements.namedItem(p.name) as HTMLInputElement | HTMLSelectElement | null;
      if (!f) continue;
      if (p.type === 'bool') params[p.name] = (f as HTMLInputElement).checked;
      else if (f.value !== '') params[p.name] = p.type === 'int' ? Number(f.value) : f.value;
    }
    const t0 = performance.now();
    try {
      const res = await client.call('query', t.name, JSON.stringify(params));
      const rows: EngineAnswers['sql'] = { ...res, columns: res.columns.map((col) => col.name) };
      show(
        rows,
        t.name,
        Object.fromEntries(res.columns.map((col) => [col.name, col.unit])),
        performance.now() - t0,
        res.total,
      );
    } catch (err) {
      fail(err);
    }
  });
  drawForm();

  const sql = el('textarea', { class: 'sql', spellcheck: 'false', rows: 8 });
  sql.value = EXAMPLE_SQL;
  const limit = el('input', { type: 'number', value: 10000, min: 1, class: 'limit' });
  const run = el('button', { class: 'primary', text: 'Run SQL (Ctrl+Enter)' });
  const runSql = async () => {
    const t0 = performance.now();
    try {
      show(
        await client.call('sql', sql.value, Number(limit.value) || 10000, 30000),
        'query',
        {},
        performance.now() - t0,
      );
    } catch (err) {
      fail(err);
    }
  };
  run.addEventListener('click', runSql);
  sql.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) runSql();
  });
  c.root.append(
    el(
      'div',
      { class: 'queries' },
      el(
        'div',
        { class: 'query-forms' },
        el(
          'section',
          {},
          el('h3', { text: 'Templates' }),
          templates.length ? pick : el('p', { class: 'muted', text: 'no templates' }),
          form,
        ),
        el(
          'section',
          {},
          el('h3', {}, 'SQL (read-only; ', schemaLink, ')'),
          sql,
          el('div', { class: 'toolbar' }, el('label', {}, 'row limit ', limit), el('span', { class: 'spacer' }), run),
        ),
      ),
      out,
      schema,
    ),
  );
  if (takePanel('schema')) revealPanel(schema);
}

/**
 * The SnapshotDB's tables and columns (type, unit, meaning) as the engine declares them: what the
 * SQL console can read. Closed until asked for.
 */
function schemaPanel(tables: TableDoc[]): HTMLDetailsElement {
  return el(
    'details',
    { class: 'schema-panel', id: 'schema' },
    el('summary', { text: `Tables and columns (${tables.length} tables)` }),
    ...tables.map((t) =>
      el(
        'section',
        { class: 'schema-table', 'data-table': t.name },
        el(
          'h4',
          {},
          el('code', { text: t.name }),
          el('span', { class: 'muted', text: ` — one row per ${t.row.replace(/`/g, '')}` }),
        ),
        gridTable(
          ['column', 'type', 'unit', 'meaning'],
          t.columns.map((col) =>
            el(
              'tr',
              {},
              el('td', {}, el('code', { text: col.name })),
              el('td', { class: 'muted', text: col.type }),
              el('td', { text: col.unit }),
              // A project doc named in parentheses is no file a page user has.
              el('td', { text: col.doc.replace(/`/g, '').replace(/\s*\(docs\/[\w-]+\.md\)/g, '') }),
            ),
          ),
          'grid compact schema-columns',
        ),
      ),
    ),
  );
}
