// What if: the caching allocator simulated on this device's recorded requests under other
// settings (PYTORCH_CUDA_ALLOC_CONF). The recorded settings first, as a self-check (the health
// line), then a form for the settings, the recorded and simulated reserved lines, what changes,
// and the standard set of settings ranked. Wording and geometry: ./whatif-layout; drawing:
// ./whatif-draw. Every simulation is one message to the engine worker.
import type { OpenFile, ViewContext } from '../app-types';
import type { SimulationLines, TuneRow, Tuning } from '../generated/answers';
import { EngineFailure } from '../client';
import { DEFS, bytes, bytesSpan, card, el, eventLabel, gridTable, int, plural } from '../ui/format';
import { fitCanvas, onResize } from '../ui/canvas';
import { plotWidth, type Frame } from '../ui/plot';
import { computing } from '../ui/busy';
import { newestOnly } from '../ui/window';
import { PAD } from './timeline-layout';
import { WHATIF_COLORS, drawWhatIf, whatIfX, type WhatIfMarker } from './whatif-draw';
import {
  buildConf,
  changeText,
  chartMax,
  deviceMemoryOf,
  eventList,
  forThePage,
  formFromConf,
  formOf,
  healthOf,
  oomCell,
  oomVerdict,
  pointAt,
  settingsLabel,
  type FormValues,
} from './whatif-layout';

/** What the view keeps per file and device while the page is open (tabs re-render views). */
interface Kept {
  conf: string;
  deviceMemory: string;
  set: { tuning: Tuning; sims: Map<string, SimulationLines>; deviceMemory: string } | null;
}
const kept = new WeakMap<OpenFile, Map<number, Kept>>();

function keptFor(file: OpenFile, device: number): Kept {
  let m = kept.get(file);
  if (!m) kept.set(file, (m = new Map()));
  let k = m.get(device);
  if (!k) m.set(device, (k = { conf: '', deviceMemory: '', set: null }));
  return k;
}

/** Open the What if view with `conf` in its form (simulated when the view opens). */
export function openWhatIf(c: ViewContext, conf: string) {
  keptFor(c.file, c.device).conf = conf;
  c.app.show('whatif');
}

const errorInfo = (e: unknown) =>
  e instanceof EngineFailure ? e.info : { code: 'ERROR', message: String(e), hint: '' };

export async function renderWhatIf(c: ViewContext) {
  const d = c.deviceOverview;
  if (!d) return;
  if (d.events === 0) {
    c.root.dataset.whatif = 'no-trace';
    c.root.append(
      el(
        'div',
        { class: 'health info whatif-health' },
        el('strong', { text: 'A simulation needs a trace. ' }),
        `This file holds only the allocator's state at the dump for ${d.pinned_host ? 'this entry' : `device ${c.device}`}, no allocation events: there are no requests to replay under other settings. `,
        'Record the history before the run (torch.cuda.memory._record_memory_history()) and dump again.',
      ),
    );
    return;
  }
  if (d.pinned_host) {
    c.root.dataset.whatif = 'host';
    c.root.append(
      el(
        'div',
        { class: 'health info whatif-health' },
        el('strong', { text: 'Pinned host memory is not simulated. ' }),
        `Entry ${c.device} holds pinned host memory, which PyTorch's host allocator manages with rules of its own; the simulator models the device caching allocator. Pick a device above.`,
      ),
    );
    return;
  }
  const client = c.file.client;
  const keep = keptFor(c.file, c.device);
  const total = d.events;

  // ---- the elements ----
  const health = el('div', { class: 'health whatif-health' });
  const legend = el('div', { class: 'legend whatif-legend' });
  const canvas = el('canvas', { class: 'chart whatif-chart', style: 'height:380px' });
  const readout = el('div', { class: 'readout' });
  const chartBox = el('div', { class: 'chart-col', style: 'position:relative' }, legend, canvas, readout);
  const form = el('aside', { class: 'whatif-form' });
  const summary = el('section', { class: 'whatif-summary' });
  const setBox = el('section', { class: 'whatif-set-box' });
  c.root.append(health, el('div', { class: 'whatif-top' }, chartBox, form), summary, setBox);

  const g = canvas.getContext('2d')!;
  const frame = (): Frame => ({ ...fitCanvas(canvas, g, 380), pad: PAD });
  const columns = () => Math.max(50, Math.floor(plotWidth(frame())));

  // ---- the recorded settings: the self-check ----
  const recorded = await client.call('simulate', c.device, '', 0, columns());
  const h = healthOf(recorded);
  health.classList.add(h.kind);
  health.dataset.reproduces = String(recorded.reproduces_recording);
  health.append(
    el('strong', { text: h.text }),
    h.kind === 'ok'
      ? '. With the recorded settings it makes the same segment allocations and releases, at the same events, as the recording: its answers for other settings below start from a faithful model.'
      : h.kind === 'warn'
        ? '. Answers for other settings are estimates from that point on.'
        : '. The simulation below still follows every recorded request.',
  );
  const defaults = formOf(recorded.settings);

  // ---- the form ----
  const field = (placeholder: string) => el('input', { type: 'text', placeholder, spellcheck: 'false' });
  const expandable = el('input', { type: 'checkbox' });
  const maxSplit = field('unlimited');
  const maxNonSplit = field('20');
  const divisions = field('off');
  const gc = field('off');
  const capacityText = recorded.capacity ? bytes(recorded.capacity.bytes) : 'e.g. 80GiB';
  const memory = field(capacityText);
  const conf = el('textarea', {
    rows: 2,
    spellcheck: 'false',
    placeholder: '(as recorded)',
    'aria-label': 'PYTORCH_CUDA_ALLOC_CONF to simulate',
  });
  const error = el('div', { class: 'rules-error', role: 'alert', hidden: true });
  const simulateBtn = el('button', { class: 'primary', text: 'Simulate' });
  const resetBtn = el('button', { text: 'Recorded settings' });
  const row = (key: string, input: HTMLElement, title: string) =>
    el('label', { class: 'field', title }, el('code', { text: key }), input);
  form.append(
    el('h3', { text: 'Settings to simulate' }),
    el(
      'div',
      { class: 'muted recorded-conf' },
      'Recorded: ',
      el('code', { text: settingsLabel(recorded.settings, false) }),
    ),
    row('expandable_segments', expandable, 'grow segments by mapping pages instead of allocating new ones'),
    row('max_split_size_mb', maxSplit, 'blocks larger than this are never split (empty: unlimited)'),
    row(
      'max_non_split_rounding_mb',
      maxNonSplit,
      'a request may take a cached unsplittable block up to this much larger',
    ),
    row('roundup_power2_divisions', divisions, 'round requests to 1/N of a power of two: 4, or [256:1,512:2,>:4]'),
    row('garbage_collection_threshold', gc, 'free cached blocks past this fraction of the device memory (needs it)'),
    row(
      'device memory',
      memory,
      recorded.capacity
        ? `the capacity for the OOM verdict (empty: ${bytes(recorded.capacity.bytes)}, seen at the recorded OOM): 80GiB, 80GB, 81920MiB or bytes`
        : 'the capacity for the OOM verdict (unknown: no OOM was recorded): 80GiB, 80GB, 81920MiB or bytes',
    ),
    el('label', { class: 'conf' }, 'PYTORCH_CUDA_ALLOC_CONF (what is simulated)', conf),
    error,
    el('div', { class: 'actions' }, simulateBtn, resetBtn),
  );

  let extra: string[] = [];
  const read = (): FormValues => ({
    expandable: expandable.checked,
    maxSplitMb: maxSplit.value,
    maxNonSplitMb: maxNonSplit.value,
    divisions: divisions.value,
    gcThreshold: gc.value,
  });
  const write = (v: FormValues) => {
    expandable.checked = v.expandable;
    maxSplit.value = v.maxSplitMb;
    maxNonSplit.value = v.maxNonSplitMb;
    divisions.value = v.divisions;
    gc.value = v.gcThreshold;
  };
  /** Put `text` in the conf field and the fields it names in the form. */
  const loadConf = (text: string) => {
    const parsed = formFromConf(text, defaults);
    extra = parsed.extra;
    write(parsed.values);
    conf.value = text;
  };
  for (const input of [expandable, maxSplit, maxNonSplit, divisions, gc])
    input.addEventListener(input === expandable ? 'change' : 'input', () => {
      conf.value = buildConf(read(), defaults, extra);
    });
  conf.addEventListener('input', () => {
    const parsed = formFromConf(conf.value, defaults);
    extra = parsed.extra;
    write(parsed.values);
  });
  for (const input of [maxSplit, maxNonSplit, divisions, gc, memory])
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') void simulate();
    });
  conf.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      void simulate();
    }
  });
  simulateBtn.addEventListener('click', () => void simulate());
  resetBtn.addEventListener('click', () => {
    loadConf('');
    memory.value = '';
    void simulate();
  });

  const showError = (info: { message: string; hint: string }) => {
    error.hidden = false;
    error.replaceChildren(
      el('strong', { text: forThePage(info.message) }),
      info.hint ? el('div', { class: 'hint', text: forThePage(info.hint) }) : '',
    );
  };

  // ---- the chart and the summary of one simulation ----
  let shown: SimulationLines = recorded;
  let hover: number | null = null;

  function markers(s: SimulationLines): WhatIfMarker[] {
    const out: WhatIfMarker[] = [
      {
        index: s.recorded_reserved_peak.event ?? 0,
        kind: 'recPeak',
        label: `recorded peak ${bytes(s.recorded_reserved_peak.bytes)}`,
      },
      { index: s.reserved_peak.event ?? 0, kind: 'simPeak', label: `simulated peak ${bytes(s.reserved_peak.bytes)}` },
    ];
    if (typeof s.oom === 'number') out.push({ index: s.oom, kind: 'oom', label: `OOM at event ${int(s.oom)}` });
    return out;
  }

  function draw() {
    drawWhatIf(g, {
      points: shown.lines,
      total,
      frame: frame(),
      markers: markers(shown),
      capacity: shown.capacity?.bytes ?? null,
      hover,
    });
  }

  function renderLegend(s: SimulationLines) {
    const cap = s.capacity?.bytes ?? null;
    const { capacityShown } = chartMax(s.lines, cap);
    const swatch = (color: string, text: string, dashed = false) =>
      el(
        'span',
        {},
        el('i', {
          style: dashed
            ? `background:repeating-linear-gradient(90deg, ${color} 0 4px, transparent 4px 7px); height:3px; vertical-align:3px`
            : `background:${color}`,
        }),
        text,
      );
    legend.replaceChildren(
      swatch(WHATIF_COLORS.recorded, 'recorded reserved'),
      swatch(WHATIF_COLORS.simulated, `simulated reserved: ${settingsLabel(s.settings, s.as_recorded)}`),
      swatch(WHATIF_COLORS.simPeak, 'simulated peak'),
      swatch(WHATIF_COLORS.recPeak, 'recorded peak', true),
      typeof s.oom === 'number' ? swatch(WHATIF_COLORS.oom, 'simulated OOM') : '',
      cap !== null && capacityShown ? swatch(WHATIF_COLORS.capacity, `device memory ${bytes(cap)}`, true) : '',
      cap !== null && !capacityShown
        ? el('span', { class: 'muted', text: `device memory ${bytes(cap)} (above the chart)` })
        : '',
    );
  }

  function renderSummary(s: SimulationLines) {
    const rec = s.recorded_reserved_peak.bytes;
    const change = s.reserved_peak.bytes - rec;
    const oomKind = typeof s.oom === 'number' ? 'warn' : s.oom === null ? 'ok' : 'info';
    const verdict = oomVerdict(s);
    const recordedToo = s.oom_detail?.recorded ? ', where the recording ran out of memory too' : '';
    const details: (string | HTMLElement)[] = [];
    if (s.recorded_ooms_avoided.length)
      details.push(`Recorded OOMs the simulated allocator would have served: ${eventList(s.recorded_ooms_avoided)}.`);
    else if (d!.window.oom_events > 0 && !s.as_recorded)
      details.push(`No recorded OOM avoided (${plural(d!.window.oom_events, 'OOM event')} in the trace).`);
    details.push(
      s.capacity
        ? `Device memory: ${bytes(s.capacity.bytes)}, ${forThePage(s.capacity.source)}.`
        : 'Device memory: unknown (no OOM was recorded with the free memory); give it in the form for an OOM verdict.',
    );
    if (typeof s.oom === 'number' && s.capacity && s.reserved_peak.bytes > s.capacity.bytes)
      details.push(
        `After the OOM the simulation goes on as if the device were larger: the reserved peak of ${bytes(s.reserved_peak.bytes)} is more than the device memory.`,
      );
    if (s.cache_releases.length)
      details.push(
        `Cache releases the program asked for (empty_cache), applied at the same points: ${eventList(s.cache_releases)}.`,
      );
    for (const n of s.notes) details.push(`Note: ${forThePage(n)}.`);
    summary.replaceChildren(
      el('h3', { text: `Simulated: ${settingsLabel(s.settings, s.as_recorded)}` }),
      el(
        'div',
        { class: `health ${oomKind} whatif-verdict`, 'data-oom': String(s.oom) },
        ...(typeof s.oom === 'string'
          ? [el('strong', { text: verdict })]
          : [el('strong', { text: 'Simulated: ' }), `${verdict}${recordedToo}.`]),
      ),
      el(
        'div',
        { class: 'cards' },
        card(
          'reserved peak',
          bytesSpan(s.reserved_peak.bytes, 'sim-reserved-peak'),
          [
            'recorded ',
            bytesSpan(rec),
            el('br'),
            el('span', {
              class: change > 0 ? 'worse' : change < 0 ? 'better' : '',
              text: changeText(change, rec),
            }),
            el('br'),
            `at ${eventLabel(s.reserved_peak.event)}`,
          ],
          'primary',
        ),
        card('allocated peak', bytesSpan(s.allocated_peak.bytes), `at ${eventLabel(s.allocated_peak.event)}`),
        card(
          'segment allocations',
          int(s.segment_allocs),
          `${plural(s.segment_frees, 'release')}${s.settings.expandable_segments ? ' (expandable: pages mapped and unmapped)' : ''}`,
          '',
          'cudaMalloc calls (page mappings with expandable segments), and cudaFree calls (unmappings)',
        ),
        card(
          'free at the reserved peak',
          bytesSpan(s.free_at_reserved_peak),
          ['largest free block ', bytesSpan(s.largest_free_at_reserved_peak)],
          '',
          `${DEFS.free}; the largest free block is ${DEFS.largestFree}`,
        ),
      ),
      el('ul', { class: 'whatif-details' }, ...details.map((t) => el('li', {}, t))),
    );
  }

  function show(s: SimulationLines) {
    shown = s;
    renderLegend(s);
    renderSummary(s);
    draw();
    c.root.dataset.sim = 'done';
  }

  const newest = newestOnly();
  async function simulate() {
    const text = conf.value.trim();
    const mem = deviceMemoryOf(memory.value);
    error.hidden = true;
    if (mem === null) {
      showError({
        message: `"${memory.value.trim()}" is not a size`,
        hint: 'device memory takes 80GiB, 80GB, 81920MiB or a byte count (empty: from a recorded OOM)',
      });
      c.root.dataset.sim = 'error';
      return;
    }
    keep.conf = text;
    keep.deviceMemory = memory.value.trim();
    c.root.dataset.sim = 'running';
    simulateBtn.disabled = true;
    try {
      const s = await newest(
        computing(chartBox, client.call('simulate', c.device, text, mem, columns()), 'simulating…'),
      );
      if (s) show(s);
    } catch (e) {
      showError(errorInfo(e));
      c.root.dataset.sim = 'error';
    } finally {
      simulateBtn.disabled = false;
    }
  }

  // ---- the standard set ----
  const tryBtn = el('button', { class: 'primary', text: 'Try the standard set' });
  const cancelBtn = el('button', { text: 'Cancel', hidden: true });
  const progress = el('span', { class: 'muted set-progress' });
  const setResult = el('div', { class: 'set-result' });
  setBox.append(
    el('h3', { text: 'The standard set' }),
    el('p', {
      class: 'muted',
      text: 'The settings people try after an out-of-memory message, each simulated on this recording with the device memory above, ranked by reserved peak (those that run out of memory last). Click a row to see it on the chart.',
    }),
    el('div', { class: 'actions' }, tryBtn, cancelBtn, progress),
    setResult,
  );
  let cancelled = false;
  cancelBtn.addEventListener('click', () => {
    cancelled = true;
    cancelBtn.disabled = true;
    progress.textContent += ' · cancelling after this one…';
  });
  tryBtn.addEventListener('click', () => void runSet());

  async function runSet() {
    const memText = memory.value.trim();
    const mem = deviceMemoryOf(memText);
    if (mem === null) return void simulate(); // says what is wrong with the field
    cancelled = false;
    tryBtn.disabled = true;
    cancelBtn.hidden = false;
    cancelBtn.disabled = false;
    setResult.replaceChildren();
    keep.set = null;
    c.root.dataset.set = 'running';
    try {
      const candidates = await client.call('tuneCandidates', c.device, mem);
      const sims = new Map<string, SimulationLines>();
      const rows: TuneRow[] = [];
      for (const [k, cf] of candidates.entries()) {
        if (cancelled) break;
        progress.textContent = `${k + 1} / ${candidates.length}: ${cf || 'as recorded'}`;
        // One message each: the worker answers other requests between them.
        const s = await client.call('simulate', c.device, cf, mem, columns());
        sims.set(cf, s);
        rows.push({
          conf: cf,
          label: cf || 'as recorded',
          reserved_peak: s.reserved_peak.bytes,
          change: 0,
          oom: s.oom,
          segment_allocs: s.segment_allocs,
          largest_free_at_reserved_peak: s.largest_free_at_reserved_peak,
        });
      }
      if (cancelled) {
        progress.textContent = `Cancelled after ${rows.length} of ${candidates.length} settings.`;
        c.root.dataset.set = 'cancelled';
        return;
      }
      const base = rows.find((r) => r.conf === '')?.reserved_peak ?? 0;
      for (const r of rows) r.change = r.reserved_peak - base;
      const tuning = await client.call('rankTune', c.device, JSON.stringify(rows));
      progress.textContent = `${candidates.length} / ${candidates.length} simulated.`;
      keep.set = { tuning, sims, deviceMemory: memText };
      renderSet(keep.set);
      c.root.dataset.set = 'done';
    } catch (e) {
      const info = errorInfo(e);
      progress.textContent = '';
      setResult.replaceChildren(
        el(
          'div',
          { class: 'rules-error' },
          el('strong', { text: forThePage(info.message) }),
          info.hint ? el('div', { class: 'hint', text: forThePage(info.hint) }) : '',
        ),
      );
      c.root.dataset.set = 'error';
    } finally {
      tryBtn.disabled = false;
      cancelBtn.hidden = true;
    }
  }

  function renderSet(set: NonNullable<Kept['set']>) {
    const { tuning } = set;
    const base = tuning.rows.find((r) => r.conf === '')?.reserved_peak ?? 0;
    const rows = tuning.rows.map((r) => {
      const first = r.conf === tuning.try_first;
      const tr = el(
        'tr',
        {
          'data-conf': r.conf,
          class: first ? 'current' : '',
          title: 'show this setting on the chart and in the form',
        },
        el('td', {}, el('code', { text: r.label }), first ? el('span', { class: 'tag', text: 'try first' }) : ''),
        el('td', { class: 'num' }, bytesSpan(r.reserved_peak)),
        el('td', {
          class: `num ${r.change > 0 ? 'worse' : r.change < 0 ? 'better' : ''}`,
          text: r.conf === '' ? '—' : changeText(r.change, base),
        }),
        el('td', { class: typeof r.oom === 'number' ? 'oom' : '', text: oomCell(r.oom) }),
        el('td', { class: 'num', text: int(r.segment_allocs) }),
      );
      tr.addEventListener('click', () => {
        const s = set.sims.get(r.conf);
        if (!s) return;
        loadConf(r.conf);
        memory.value = set.deviceMemory;
        keep.conf = r.conf;
        keep.deviceMemory = set.deviceMemory;
        error.hidden = true;
        for (const other of tr.parentElement?.children ?? []) other.classList.remove('selected');
        tr.classList.add('selected');
        show(s);
        chartBox.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
      });
      return tr;
    });
    setResult.replaceChildren(
      el('div', { class: `health ${tuning.try_first ? 'ok' : 'info'} set-verdict`, text: forThePage(tuning.verdict) }),
      gridTable(['setting', 'reserved peak', 'change', 'OOM', 'segment allocations'], rows, 'grid whatif-set'),
    );
  }

  // ---- hover ----
  canvas.addEventListener('mousemove', (e) => {
    const f = frame();
    const i = Math.max(0, Math.min(total - 1, whatIfX(total, f).iOf(e.offsetX)));
    hover = i;
    const k = pointAt(shown.lines, i);
    const p = shown.lines[k];
    if (p)
      readout.replaceChildren(
        el('b', { text: p.last > p.first ? `events ${int(p.first)}–${int(p.last)}` : eventLabel(p.first) }),
        ' · recorded reserved ≤ ',
        bytesSpan(p.recorded_max),
        ' · simulated ≤ ',
        bytesSpan(p.simulated_max),
        p.simulated_max !== p.recorded_max
          ? el('span', {
              class: p.simulated_max > p.recorded_max ? 'worse' : 'better',
              text: ` · ${changeText(p.simulated_max - p.recorded_max, p.recorded_max)}`,
            })
          : '',
      );
    draw();
  });
  canvas.addEventListener('mouseleave', () => {
    hover = null;
    draw();
  });
  onResize(canvas, draw);

  // ---- first answer: as recorded, or what the view had (or was opened with) ----
  loadConf(keep.conf);
  memory.value = keep.deviceMemory;
  if (keep.set) renderSet(keep.set);
  if (keep.conf || keep.deviceMemory) await simulate();
  else show(recorded);
}
