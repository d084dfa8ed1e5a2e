// Memory tree as an icicle flame graph: who holds the live memory at an event (default: the
// allocated peak). Width = live bytes. Click zooms, search highlights, the keyboard walks the tree
// (↑ parent, ↓ largest child, ←/→ siblings, Enter zoom, Esc reset), and the side list reaches
// frames too thin to click. Geometry: ./tree-layout; drawing: ./tree-draw; side: ./tree-side.
// Above the tree, a thin bar of what the same live memory is, by category.
import type { ViewContext } from '../app-types';
import { bytesSpan, el, eventLabel, int, plural } from '../ui/format';
import { fitCanvas, onResize } from '../ui/canvas';
import { tooltip } from '../ui/tooltip';
import { focusAt, focusEvent, focusSwitch } from './focus';
import { drawIcicle } from './tree-draw';
import {
  boxAt,
  childrenOf,
  clickBox,
  icicle,
  icicleHeight,
  levelsBelow,
  MAX_ROWS,
  navigate,
  search,
  type Box,
  type Focus,
} from './tree-layout';
import { crumbs, nodeTip, sidePanel } from './tree-side';
import { categoryStrip } from './category-strip';

export async function renderTree(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  const event = focusEvent(c);
  const [{ nodes }, cats] = await Promise.all([
    c.file.client.analyze('tree', c.device, focusAt(c)),
    c.file.client.analyze('categories', c.device, focusAt(c)),
  ]);
  const kids = childrenOf(nodes);
  let focus: Focus = { selected: 0, zoom: 0 };
  let query = '';
  let matches = new Set<number>();
  let boxes: Box[] = [];

  const evInput = el('input', {
    type: 'number',
    min: 0,
    max: d.events - 1,
    value: event ?? '',
    placeholder: 'event',
    class: 'event-input',
  });
  const evGo = el('button', { text: 'Show' });
  evGo.addEventListener('click', () => c.app.select(evInput.value === '' ? null : Number(evInput.value), 'tree'));
  const peak = d.events ? d.peaks.allocated.event : null;
  const searchBox = el('input', { type: 'search', placeholder: 'Search frames (file, function)…', class: 'search' });
  const head = el(
    'div',
    { class: 'toolbar' },
    el(
      'span',
      {},
      el('b', {
        text: !d.events
          ? 'Live memory at the dump (this snapshot has no trace events)'
          : event !== null && event === peak
            ? `Live memory at the allocated peak (${eventLabel(event)})`
            : `Live memory after the selected ${eventLabel(event)}`,
      }),
      ' · ',
      bytesSpan(nodes[0].total_bytes),
      ` in ${plural(nodes[0].blocks, 'block')}`,
    ),
    el('span', { class: 'spacer' }),
    focusSwitch(c, 'tree'),
    d.events ? evInput : '',
    d.events ? evGo : '',
    searchBox,
  );
  const crumbBar = el('div', { class: 'crumbs' });
  const canvas = el('canvas', { class: 'flame', tabindex: 0, 'aria-label': 'memory flame graph' });
  const tip = tooltip(canvas);
  const side = el('aside', { class: 'tree-side' });
  c.root.append(
    el(
      'div',
      { class: 'tree-view' },
      el(
        'div',
        { class: 'flame-col' },
        head,
        cats.categories.length
          ? categoryStrip(cats.categories, cats.active, {
              label: 'the same live memory by category',
              width: Math.max(300, (c.root.clientWidth || 1200) - 440),
              pick: () => c.app.select(cats.event, 'categories'),
              pickHint: 'click for the Categories view at this event',
            })
          : '',
        crumbBar,
        el('div', { class: 'flame-box' }, canvas, tip.el),
      ),
      side,
    ),
  );
  const g = canvas.getContext('2d')!;

  const show = (f: Focus) => {
    focus = f;
    draw();
  };

  function draw() {
    drawFlame();
    drawSide();
  }

  /** The icicle alone: all a new width changes. */
  function drawFlame() {
    const { w, h } = fitCanvas(canvas, g, 0, icicleHeight(nodes, focus.zoom));
    g.clearRect(0, 0, w, h);
    boxes = icicle(nodes, kids, focus.zoom, w);
    drawIcicle(g, { nodes, boxes, selected: focus.selected, matches: query ? matches : null });
  }

  /** The crumbs and the side list (hundreds of rows: laid out again only when they change). */
  function drawSide() {
    const levels = levelsBelow(nodes, focus.zoom);
    crumbBar.replaceChildren(
      ...crumbs(nodes, focus.zoom, (id) => show({ selected: id, zoom: id })),
      levels > MAX_ROWS
        ? el('span', {
            class: 'muted',
            text: ` · the first ${MAX_ROWS} of ${int(levels)} levels: click a frame to zoom in`,
          })
        : '',
    );
    const list = query
      ? [...matches].sort((a, b) => nodes[b].total_bytes - nodes[a].total_bytes).slice(0, 200)
      : kids[focus.selected];
    const heading = query
      ? `${plural(matches.size, 'frame matches', 'frames match')} “${query}”`
      : `Callees (${int(kids[focus.selected].length)})`;
    side.replaceChildren(
      ...sidePanel(nodes, focus.selected, list, heading, (id) => show({ selected: id, zoom: nodes[id].parent ?? 0 })),
    );
  }

  canvas.addEventListener('mousemove', (e) => {
    const b = boxAt(boxes, e.offsetX, e.offsetY);
    if (b) tip.show(e, ...nodeTip(nodes[b.id]));
    else tip.hide();
  });
  canvas.addEventListener('click', (e) => {
    const b = boxAt(boxes, e.offsetX, e.offsetY);
    if (b) show(clickBox(nodes, focus.zoom, b.id));
  });
  canvas.addEventListener('keydown', (e) => {
    const next = navigate(nodes, kids, focus, e.key);
    if (!next) return;
    e.preventDefault();
    show(next);
  });
  searchBox.addEventListener('input', () => {
    query = searchBox.value.trim().toLowerCase();
    matches = search(nodes, query);
    draw();
  });
  onResize(canvas, drawFlame);
  draw();
}
