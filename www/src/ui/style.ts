// Page styles that belong with the page's own modules (spinner, definitions on hover, wrapping
// tooltips, resizable result columns, the leak floor's axis): added once, after www/style.css.
const CSS = `
.view { position: relative; }
.view.computing { min-height: 260px; }
.computing-overlay { position: absolute; inset: 0; z-index: 8; display: flex; justify-content: center; align-items: flex-start;
  padding-top: 110px; background: rgba(248, 250, 252, .7); color: #334155; font-size: 14px; pointer-events: none;
  opacity: 0; animation: snapscope-appear 0s linear .12s forwards; }
.computing-overlay .spinner, .busy-inline .spinner { width: 18px; height: 18px; border: 3px solid #cbd5e1; border-top-color: #2563eb;
  border-radius: 50%; margin-right: 10px; animation: snapscope-spin .8s linear infinite; flex: none; }
.busy-inline { display: inline-flex; align-items: center; font-size: 12.5px; color: #334155; }
.busy-inline[hidden] { display: none; }
@keyframes snapscope-spin { to { transform: rotate(360deg); } }
@keyframes snapscope-appear { to { opacity: 1; } }
.card-title.defined, .defined { text-decoration: underline dotted #94a3b8; text-underline-offset: 3px; cursor: help; }
.health.info { background: #eff6ff; border: 1px solid #bfdbfe; }
.tip { white-space: normal; overflow-wrap: anywhere; max-width: min(420px, calc(100% - 8px)); }
.tip .loc { display: block; }
.label-cell .detail, td .detail { display: block; color: var(--muted); font-size: 12px; margin-top: 1px; }
.label-cell .label { font-weight: 550; }
.label-cell .label:hover { text-decoration: underline; }
.tree-side table.grid { width: 100%; min-width: 0; table-layout: fixed; }
.tree-side table.grid td { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tree-side table.grid td.num { white-space: nowrap; width: 82px; }
.tree-side table.grid td.num.share { width: 60px; }
.tree-side table.grid td.num.blocks { width: 62px; }
.tree-side h3 { overflow-wrap: anywhere; }
.tree-side .loc { overflow-wrap: anywhere; }
ol.stack li.user .fn { color: #1d4ed8; }
ol.stack li.library, ol.stack li.generated { color: #334155; }
ol.stack li.other { color: #64748b; }
ol.stack li.other .fn { font-weight: 500; }
ol.stack .kind { font-size: 11px; color: #94a3b8; margin-left: 6px; }
details.all-frames { margin-top: 6px; font-size: 12.5px; }
details.all-frames summary { cursor: pointer; color: var(--accent); }
.result-head .cell { position: relative; }
.result-head .col-resize { position: absolute; top: 0; right: 0; bottom: 0; width: 7px; cursor: col-resize; border-right: 2px solid transparent; }
.result-head .col-resize:hover { border-right-color: #93c5fd; }
.result-head, .result-row { grid-template-columns: var(--tpl, repeat(var(--cols), minmax(110px, 1fr))); }
.floor-chart { display: grid; grid-template-columns: auto minmax(0, 1fr); grid-template-rows: 140px auto; gap: 0 6px; max-width: 700px;
  background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px 6px 8px; }
.floor-axis { position: relative; font-size: 11px; color: var(--muted); text-align: right; min-width: 58px; }
.floor-axis span { position: absolute; right: 0; transform: translateY(50%); white-space: nowrap; }
.floor-chart .floor { border: 0; padding: 0; border-radius: 0; height: 140px; max-width: none; border-left: 1px solid #cbd5e1;
  border-bottom: 1px solid #cbd5e1; position: relative;
  background-image: linear-gradient(to top, #eef2f7 1px, transparent 1px); background-size: 100% var(--grid, 25%); }
.floor-x { grid-column: 2; display: flex; gap: 4px; font-size: 11px; color: var(--muted); }
.floor-x span { flex: 1; text-align: center; }
.device-link { font-weight: 600; }
ol.stack li { word-break: normal; overflow-wrap: anywhere; }
ol.stack li.library .fn, ol.stack li.generated .fn { font-weight: 400; }
table.groups td.num, table.grid td.num { white-space: nowrap; }
.stack-cell .label { display: block; }
`;

let added = false;

/** Add the styles (once). */
export function addStyles() {
  if (added || typeof document === 'undefined') return;
  added = true;
  const s = document.createElement('style');
  s.textContent = CSS;
  document.head.append(s);
}
