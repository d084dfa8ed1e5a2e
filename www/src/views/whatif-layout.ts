// What if, the pure part (no DOM; tests/unit/whatif-layout.test.ts): the form's values and the
// alloc-conf string they make against the recorded settings, sizes as people type them, the
// sentences of the summary, and the chart's columns.
import type { LinePoint, SimSettings, SimulationLines, TuneRow } from '../generated/answers';
import { bytes, int, pct } from '../ui/format';

export const MIB = 2 ** 20;

/** The settings form, as text (what the inputs hold). */
export interface FormValues {
  expandable: boolean;
  /** MiB; '' = unlimited. */
  maxSplitMb: string;
  /** MiB. */
  maxNonSplitMb: string;
  /** '' = off, "4" (every interval) or "[256:1,512:2,>:4]". */
  divisions: string;
  /** A fraction in (0, 1); '' = off. */
  gcThreshold: string;
}

/** Number of power-of-two intervals the allocator keeps divisions for (1 MiB … 32 GiB). */
const INTERVALS = 16;

/** The form filled with the settings of a simulation (the recorded run's: the defaults). */
export function formOf(s: SimSettings): FormValues {
  return {
    expandable: s.expandable_segments,
    maxSplitMb: s.max_split_size === null ? '' : mbText(s.max_split_size),
    maxNonSplitMb: mbText(s.max_non_split_rounding),
    divisions: divisionsText(s.roundup_power2_divisions),
    gcThreshold: s.garbage_collection_threshold > 0 ? String(s.garbage_collection_threshold) : '',
  };
}

/** Bytes as a MiB count for a field: whole MiB as an integer, else up to 3 decimals. */
const mbText = (b: number) => String(Number((b / MIB).toFixed(3)));

/**
 * The divisions per interval as PyTorch's syntax: '' when off everywhere (≤ 1), one number when
 * the same everywhere, else a list whose first item covers the sizes below it and whose `>` item
 * covers the rest ("[256:1,512:2,1024:4,>:8]"). `parseDivisions` reads it back to the same list.
 */
export function divisionsText(d: number[]): string {
  if (!d.length || d.every((x) => x <= 1)) return '';
  if (d.every((x) => x === d[0])) return String(d[0]);
  const n = d.length;
  let lead = 0;
  while (lead + 1 < n && d[lead + 1] === d[0]) lead++;
  let tail = n - 1;
  while (tail - 1 > lead && d[tail - 1] === d[n - 1]) tail--;
  const items = [`${2 ** lead}:${d[0]}`];
  for (let k = lead + 1; k < tail; k++) items.push(`${2 ** k}:${d[k]}`);
  if (tail > lead && tail < n) items.push(`>:${d[n - 1]}`);
  return `[${items.join(',')}]`;
}

/**
 * `roundup_power2_divisions` text as the allocator reads it (16 intervals from 1 MiB; the first
 * item also covers the smaller sizes, `>` every larger one, an interval not named is 0); null
 * when it is not valid. '' is off everywhere.
 */
export function parseDivisions(text: string): number[] | null {
  const t = text.replace(/\s+/g, '');
  const valid = (n: number) => Number.isSafeInteger(n) && n >= 0 && (n <= 1 || (n & (n - 1)) === 0);
  const num = (s: string) => (/^\d+$/.test(s) ? Number(s) : NaN);
  if (t === '') return new Array(INTERVALS).fill(0);
  if (/^\d+$/.test(t)) return valid(num(t)) ? new Array(INTERVALS).fill(num(t)) : null;
  const list = /^\[(.*)\]$/.exec(t);
  if (!list) return null;
  const out = new Array(INTERVALS).fill(0);
  let first = true;
  let last = 0;
  for (const item of list[1].split(',')) {
    const [k, v, ...more] = item.split(':');
    const n = num(v ?? '');
    if (more.length || !valid(n)) return null;
    if (k === '>') {
      out.fill(n, Math.min(INTERVALS, last + 1));
      continue;
    }
    const mb = num(k);
    if (!(mb >= 1) || (mb & (mb - 1)) !== 0) return null;
    const idx = Math.round(Math.log2(mb));
    if (first) out.fill(n, 0, Math.min(idx, INTERVALS));
    first = false;
    if (idx < INTERVALS) out[idx] = n;
    last = idx;
  }
  return out;
}

/** Two field texts mean the same number (or are the same text). */
function sameNumber(a: string, b: string): boolean {
  const [x, y] = [a.trim(), b.trim()];
  if (x === y) return true;
  return x !== '' && y !== '' && Number.isFinite(Number(x)) && Number(x) === Number(y);
}

/** Two divisions texts round the same (≤ 1 is off in both); unreadable text differs. */
function sameDivisions(a: string, b: string): boolean {
  const [x, y] = [parseDivisions(a), parseDivisions(b)];
  if (!x || !y) return a.replace(/\s+/g, '') === b.replace(/\s+/g, '');
  return x.every((v, i) => Math.max(1, v) === Math.max(1, y[i]));
}

/**
 * The alloc-conf string of the form: only the keys whose value differs from the recorded one
 * (the engine applies the string on top of the recorded settings), then `extra` pairs the form
 * has no field for. Clearing max_split_size_mb asks for unlimited (-1), clearing the divisions
 * turns them off (1); a cleared rounding or threshold leaves the recorded value.
 */
export function buildConf(v: FormValues, recorded: FormValues, extra: string[] = []): string {
  const parts: string[] = [];
  if (v.expandable !== recorded.expandable) parts.push(`expandable_segments:${v.expandable ? 'True' : 'False'}`);
  if (!sameNumber(v.maxSplitMb, recorded.maxSplitMb)) parts.push(`max_split_size_mb:${v.maxSplitMb.trim() || '-1'}`);
  if (v.maxNonSplitMb.trim() && !sameNumber(v.maxNonSplitMb, recorded.maxNonSplitMb))
    parts.push(`max_non_split_rounding_mb:${v.maxNonSplitMb.trim()}`);
  if (!sameDivisions(v.divisions, recorded.divisions))
    parts.push(`roundup_power2_divisions:${v.divisions.replace(/\s+/g, '') || '1'}`);
  const gc = v.gcThreshold.trim();
  if (gc && !sameNumber(gc, recorded.gcThreshold) && !(Number(gc) === 0 && recorded.gcThreshold === ''))
    parts.push(`garbage_collection_threshold:${gc}`);
  return [...parts, ...extra].join(',');
}

/** `key:value` pairs of an alloc-conf string; commas inside brackets belong to the value. */
export function splitConf(conf: string): [string, string][] {
  const out: [string, string][] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= conf.length; i++) {
    const ch = conf[i];
    if (ch === '[') depth++;
    else if (ch === ']') depth--;
    if (i === conf.length || (ch === ',' && depth === 0)) {
      const part = conf.slice(start, i).trim();
      if (part) {
        const at = part.indexOf(':');
        out.push(at < 0 ? [part, ''] : [part.slice(0, at).trim(), part.slice(at + 1).trim()]);
      }
      start = i + 1;
    }
  }
  return out;
}

/**
 * The form for an alloc-conf string typed or picked (the recorded values where it says
 * nothing), and the pairs the form has no field for, to keep in the string as they are.
 */
export function formFromConf(conf: string, recorded: FormValues): { values: FormValues; extra: string[] } {
  const values = { ...recorded };
  const extra: string[] = [];
  for (const [k, v] of splitConf(conf)) {
    if (k === 'expandable_segments' && /^(true|false|1|0)$/i.test(v)) values.expandable = /^(true|1)$/i.test(v);
    else if (k === 'max_split_size_mb') values.maxSplitMb = v === '-1' ? '' : v;
    else if (k === 'max_non_split_rounding_mb') values.maxNonSplitMb = v;
    else if (k === 'roundup_power2_divisions') values.divisions = v;
    else if (k === 'garbage_collection_threshold') values.gcThreshold = v;
    else extra.push(v ? `${k}:${v}` : k);
  }
  return { values, extra };
}

/**
 * A byte count as people type it, as the CLI's --device-memory reads it: "80GiB", "80 GB",
 * "81920MiB", "85899345920" (GB = 10^9, GiB = 2^30; K/M/G/T alone are binary). null for
 * anything else.
 */
export function parseBytes(text: string): number | null {
  const t = text.trim();
  const m = /^(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)$/i.exec(t);
  if (!m) return null;
  const scale: Record<string, number> = {
    '': 1,
    b: 1,
    byte: 1,
    bytes: 1,
    k: 2 ** 10,
    kib: 2 ** 10,
    kb: 1e3,
    m: 2 ** 20,
    mib: 2 ** 20,
    mb: 1e6,
    g: 2 ** 30,
    gib: 2 ** 30,
    gb: 1e9,
    t: 2 ** 40,
    tib: 2 ** 40,
    tb: 1e12,
  };
  const s = scale[m[2].toLowerCase()];
  const v = Number(m[1]) * (s ?? NaN);
  return Number.isFinite(v) && v >= 1 ? Math.round(v) : null;
}

/** The device memory field: 0 when empty (the engine takes it from a recorded OOM), else bytes. */
export function deviceMemoryOf(text: string): number | null {
  return text.trim() === '' ? 0 : parseBytes(text);
}

/** The simulation's verdict on memory in words. */
export function oomVerdict(s: Pick<SimulationLines, 'oom' | 'oom_detail' | 'capacity'>): string {
  if (typeof s.oom === 'number') {
    const d = s.oom_detail;
    const what = d ? ` (${bytes(d.bytes)} requested, ${bytes(d.reserved)} reserved)` : '';
    return `would run out of memory at event ${int(s.oom)}${what}`;
  }
  if (s.oom === 'unknown capacity') return 'OOM: unknown capacity — give the device memory';
  return s.capacity ? `no out-of-memory within ${bytes(s.capacity.bytes)}` : 'no out-of-memory';
}

/** A standard-set row's OOM cell. */
export function oomCell(oom: TuneRow['oom']): string {
  if (typeof oom === 'number') return `at event ${int(oom)}`;
  return oom === null ? 'none' : 'unknown capacity';
}

/** Event numbers in an engine sentence with thousands separators ("event 7453" → "event 7,453"). */
export const withSeparators = (s: string) =>
  s.replace(/\b(events?) (\d{4,})\b/g, (_, w, n) => `${w} ${int(Number(n))}`);

/**
 * The self-check of the recorded settings, for the health line: whether the simulation made the
 * recording's segment events (ok), where it first differs (warn), or that there is nothing to
 * compare (info).
 */
export function healthOf(s: Pick<SimulationLines, 'reproduces_recording' | 'first_difference'>): {
  kind: 'ok' | 'warn' | 'info';
  text: string;
} {
  if (s.reproduces_recording === true) return { kind: 'ok', text: 'The simulator reproduces this recording exactly' };
  if (s.reproduces_recording === false && s.first_difference) {
    const { event, reason } = s.first_difference;
    // The reason often opens with the same event: say it once.
    const rest = reason.replace(new RegExp(`^at event ${event}\\b[,:]?\\s*`), '');
    return { kind: 'warn', text: `The simulator first differs at event ${int(event)}: ${withSeparators(rest)}` };
  }
  if (s.reproduces_recording === false)
    return { kind: 'warn', text: 'The simulator does not reproduce this recording' };
  return { kind: 'info', text: 'Nothing to check: the trace has no segment events' };
}

/** A signed change in bytes with its share of `base`: "+40.00 MiB (+6.3%)", "−19.00 MiB (−2.9%)". */
export function changeText(change: number, base: number): string {
  if (change === 0) return 'no change';
  const sign = change > 0 ? '+' : '−';
  const share = base > 0 ? ` (${sign}${pct(Math.abs(change) / base)})` : '';
  return `${sign}${bytes(Math.abs(change))}${share}`;
}

/** The settings a simulation ran under, for people: "as recorded (PyTorch defaults)", "max_split_size_mb:128". */
export function settingsLabel(s: SimSettings, asRecorded: boolean): string {
  const conf = s.conf.replace(/^as recorded:\s*/, '');
  const named = conf === '(defaults)' || conf === '' ? 'PyTorch defaults' : conf;
  return asRecorded ? `as recorded (${named})` : named;
}

/** Engine sentences for the page: event numbers with thousands separators. */
export const forThePage = (s: string) => withSeparators(s.replace(/--device-memory/g, 'the device memory field'));

/** At most `max` event numbers, then how many more: "events 2,934, 5,544 and 3 more". */
export function eventList(events: number[], max = 8): string {
  const head = events.slice(0, max).map(int).join(', ');
  const more = events.length > max ? ` and ${int(events.length - max)} more` : '';
  return `${events.length === 1 ? 'event' : 'events'} ${head}${more}`;
}

/** The top of the byte axis: the lines' largest value, and the capacity when it is near (≤ 1.5×). */
export function chartMax(points: LinePoint[], capacity: number | null): { max: number; capacityShown: boolean } {
  let max = 0;
  for (const p of points) max = Math.max(max, p.recorded_max, p.simulated_max);
  const capacityShown = capacity !== null && capacity > 0 && capacity <= Math.max(1, max) * 1.5;
  return { max: capacityShown ? Math.max(max, capacity!) : max, capacityShown };
}

/** Each point's left and right x (events first..last+1 on the scale; the last reaches `right`). */
export function columnSpans(points: LinePoint[], xOf: (i: number) => number, total: number, right: number) {
  return points.map((p, k) => {
    const x0 = xOf(p.first);
    const x1 = k + 1 < points.length ? xOf(points[k + 1].first) : right;
    return { x0, x1: Math.max(x1, x0 + 0.5), p, last: p.last >= total - 1 };
  });
}

/** The point whose events hold event `i` (the last one starting at or before it; -1 if none). */
export function pointAt(points: LinePoint[], i: number): number {
  let lo = 0;
  let hi = points.length - 1;
  if (hi < 0) return -1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (points[mid].first <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
