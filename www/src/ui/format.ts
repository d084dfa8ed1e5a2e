// Formatting for people. The engine's numbers stay exact integers; only the surface rounds.

const UNITS: [number, string][] = [
  [2 ** 30, 'GiB'],
  [2 ** 20, 'MiB'],
  [2 ** 10, 'KiB'],
];

/**
 * The one byte formatter of the page: B, KiB, MiB or GiB with two decimals, the same text as the
 * engine's Rust formatter (GiB is the largest unit; ties round to even like Rust's `{:.2}`).
 * `exact()` gives the count, which `bytesSpan` shows on hover.
 */
export function bytes(b: number): string {
  const a = Math.abs(b);
  const unit = UNITS.find(([u]) => a >= u);
  if (!unit) return `${b} B`;
  const [u, name] = unit;
  // Hundredths of a unit in integer steps, so that a tie is seen exactly (a / u is a binary fraction).
  const rest = (a % u) * 100;
  let cents = Math.floor(a / u) * 100 + Math.floor(rest / u);
  const twice = (rest % u) * 2;
  if (twice > u || (twice === u && cents % 2 === 1)) cents++;
  return `${b < 0 ? '-' : ''}${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')} ${name}`;
}

/** One formatter made at page load: the first `toLocaleString` of a page costs milliseconds. */
const EN_US = new Intl.NumberFormat('en-US');
export const exact = (b: number) => `${EN_US.format(b)} B`;
export const int = (n: number) => EN_US.format(n);

/**
 * Bytes in their human unit, with the exact count in brackets only when the unit differs from it:
 * "512 B", "1.50 KiB (1,536 B)".
 */
export const bytesWithExact = (b: number) => (Math.abs(b) < 1024 ? bytes(b) : `${bytes(b)} (${exact(b)})`);

/**
 * A value PyTorch writes for an absent field ("N/A", "None", empty), which the page hides rather
 * than showing raw.
 */
export const isAbsent = (s: string | null | undefined) =>
  s === null || s === undefined || /^\s*(n\/a|none|null|)\s*$/i.test(s);

/**
 * A frame's display text split so that its trailing `file:line)` never breaks: the head may wrap
 * anywhere, the tail (from the last path separator or the opening bracket) stays on one line.
 */
export function splitFrameDisplay(display: string): [string, string] {
  const m = /\(([^()]*:\d+)\)$/.exec(display);
  if (!m) return [display, ''];
  const open = m.index + 1;
  const cut = Math.max(open, display.lastIndexOf('/', display.length) + 1, display.lastIndexOf('\\') + 1);
  const at = cut > open ? cut : open - 1;
  return [display.slice(0, at), display.slice(at)];
}

/**
 * Names that tell apart files opened under the same name: "memory_snapshot.pickle (1)", "… (2)"
 * by open order, each with its size; a unique name stays as is.
 */
export function distinctNames(files: { name: string; size: number }[]): string[] {
  const seen = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const f of files) counts.set(f.name, (counts.get(f.name) ?? 0) + 1);
  return files.map((f) => {
    if ((counts.get(f.name) ?? 0) < 2) return f.name;
    const k = (seen.get(f.name) ?? 0) + 1;
    seen.set(f.name, k);
    return `${f.name} (${k}, ${bytes(f.size)})`;
  });
}
export const hex = (n: number) => (n < 0 ? '-0x' + (-n).toString(16) : '0x' + n.toString(16));
export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
/** A count and its noun, with separators and the right number: "1 row", "1,313 rows". */
export const plural = (n: number, noun: string, nouns = `${noun}s`) => `${int(n)} ${n === 1 ? noun : nouns}`;

/** A duration in µs for people: "850 µs", "12.4 ms", "7.64 s". */
export function duration(us: number): string {
  const a = Math.abs(us);
  if (a < 1e3) return `${Math.round(us)} µs`;
  if (a < 1e6) return `${Number((us / 1e3).toPrecision(3))} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

/** What each "free" figure means, for the title of every card or line that shows one. */
export const DEFS = {
  free: 'free in reserved segments, pending frees excluded: cached by the allocator, not handed out',
  largestFree:
    'the largest free block in one reserved segment, pending frees excluded: the biggest request served without a new segment',
  pendingFree:
    'freed by the program but not yet reusable: the block waits for work queued on other streams (record_stream) to finish',
  deviceFree:
    "free device memory reported by the driver (cudaMemGetInfo) at this event, outside PyTorch's reserved segments",
  reservedMinusAllocated:
    'reserved − allocated at the same event: cached in reserved segments, not handed out (pending frees included)',
};

/**
 * `s` cut to at most `max` characters with an ellipsis. Snapshot names reach 1,800 characters in
 * real files and 1M in hostile ones: text in the DOM (headings, crumbs, titles) stays bounded.
 */
export function clip(s: string, max = 300): string {
  return s.length <= max ? s : s.slice(0, max - 1) + '…';
}

/**
 * A C++ name as people read it: template arguments folded to `<…>` (nested ones included) and
 * `(anonymous namespace)::` dropped. `c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::
 * WrapFunctionIntoFunctor_<…>>::call` → `c10::impl::wrap_kernel_functor_unboxed_<…>::call`. Text
 * without `::` is returned as it is (Python frames, file names).
 */
export function shortCpp(s: string): string {
  if (!s.includes('::')) return s;
  let out = s.replace(/\(anonymous namespace\)::/g, '');
  // Innermost argument lists first, until only folded ones are left. `<` after an operator name
  // (operator<, operator<<) opens no list.
  for (let prev = ''; prev !== out;) {
    prev = out;
    out = out.replace(/(?<!operator<?)<(?:[^<>]|<…>)*>/g, '<…>').replace(/<…>(?:<…>)+/g, '<…>');
  }
  // A name the engine cut short ("…<at::… (RegisterCUDA.cpp)") leaves a list open: fold it to the
  // end of the name, before the file in parentheses.
  const file = / \([^()]*\)$/.exec(out)?.[0] ?? '';
  const name = out.slice(0, out.length - file.length);
  const open = name.search(/(?<!operator<?)<(?!…>)/);
  return open < 0 ? out : `${name.slice(0, open)}<…>${file}`;
}

/** The first `max` lines of `s` (each clipped), and a count of the rest: stacks may hold 100k frames. */
export function clipLines(s: string, max = 200): string {
  const lines = s.split('\n');
  const head = lines.slice(0, max).map((l) => clip(l, 2000));
  return lines.length > max ? [...head, `… ${int(lines.length - max)} more lines`].join('\n') : head.join('\n');
}

/**
 * A µs timestamp as "2023-11-14 22:13:20.000 UTC"; null when it lies outside the dates JavaScript
 * holds (±8.64e15 ms), where `toISOString` throws (a snapshot may carry any int64).
 */
export function utcTime(us: number): string | null {
  const d = new Date(us / 1000);
  return Number.isNaN(d.getTime()) ? null : d.toISOString().replace('T', ' ').replace('Z', ' UTC');
}

export const eventLabel = (e: number | null | undefined) =>
  e === null || e === undefined ? 'window start' : `event ${int(e)}`;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') e.className = String(v);
    else if (k === 'text') e.textContent = String(v);
    // Through the CSSOM: a host page's CSP may refuse style attributes, not this.
    else if (k === 'style') e.style.cssText = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

/** A number with its exact byte count on hover. */
export function bytesSpan(b: number, cls = ''): HTMLElement {
  return el('span', { class: `bytes ${cls}`, title: exact(b), text: bytes(b) });
}

export function download(name: string, data: BlobPart, type: string) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A headline card: title, value, an optional line below. */
export function card(
  title: string,
  value: HTMLElement | string,
  sub: Node | string | (Node | string)[] = '',
  cls = '',
  definition?: string,
): HTMLElement {
  return el(
    'div',
    { class: `card ${cls}`, title: definition },
    el('div', { class: definition ? 'card-title defined' : 'card-title', text: title }),
    el('div', { class: 'card-value' }, value),
    el('div', { class: 'card-sub' }, ...(Array.isArray(sub) ? sub : [sub])),
  );
}

/** A table with a header row; `rows` are the <tr> elements of its body. */
export function gridTable(headers: string[], rows: HTMLElement[], cls = 'grid'): HTMLElement {
  return el(
    'table',
    { class: cls },
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', { text: h })))),
    el('tbody', {}, ...rows),
  );
}
