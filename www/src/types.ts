// Shapes of the engine's JSON answers (see crate/src/analysis/*.rs; they are the CLI's --json).

export interface Counters {
  allocated: number;
  active: number;
  reserved: number;
  requested: number;
}
export interface Peak {
  bytes: number;
  event: number | null;
}
export interface Issue {
  event: number | null;
  code: string;
  message: string;
}
export interface DeviceOverview {
  device: number;
  /** This entry is pinned host memory (`host_segments` / `host_traces`), not a device. */
  pinned_host?: boolean;
  events: number;
  segments_at_dump: number;
  expandable_segments_at_dump: number;
  allocator_rules: string;
  at_dump: Counters;
  at_window_start: Counters | null;
  at_last_event: Counters | null;
  peaks: PeakSet;
  window: {
    first_time_us: number | null;
    last_time_us: number | null;
    blocks_before_window: number;
    oom_events: number;
    /** The ring buffer's size, when the file records it. */
    max_entries?: number;
    /** The ring buffer wrapped (recorded, or the trace holds exactly max_entries events). */
    overflowed?: boolean;
  };
  consistency: {
    ok: boolean;
    issues: Issue[];
    more_issues: number;
    dump_blocks_matched: [number, number];
    ambiguous_bytes: number;
  };
}
export interface Overview {
  ok: boolean;
  schema_version: number;
  format: string | null;
  encoding: string;
  source_bytes: number;
  /** The first 64 devices; `devices_total` counts them all. */
  devices: DeviceOverview[];
  devices_total: number;
  warnings: { code: string; message: string; device?: number; event?: number }[];
}
export interface Timeline {
  device: number;
  from: number;
  to: number;
  index: number[];
  allocated_min: number[];
  allocated_max: number[];
  active_max: number[];
  reserved_max: number[];
  requested_max: number[];
  time_us: (number | null)[];
}
export interface TreeNode {
  id: number;
  parent: number | null;
  depth: number;
  label: string;
  filename: string | null;
  line: number | null;
  name: string | null;
  total_bytes: number;
  self_bytes: number;
  requested_bytes: number;
  blocks: number;
  self_blocks: number;
  /** total_bytes / the root's (the engine computes it). */
  share: number;
}
export interface MemoryTree {
  device: number;
  event: number | null;
  nodes: TreeNode[];
}
export interface StateBlock {
  address: number;
  size: number;
  requested: number;
  state: string;
  stack_id: number | null;
  lifetime_id: number | null;
}
export interface StateSegment {
  address: number;
  size: number;
  stream: number;
  segment_type: string;
  is_expandable: boolean;
  blocks: StateBlock[];
  free_bytes: number;
  largest_free: number;
}
export interface AllocatorState {
  device: number;
  event: number | null;
  segments: StateSegment[];
  reserved: number;
  allocated: number;
  active: number;
  /** Free bytes in reserved segments, pending frees excluded. */
  free: number;
  /** free / reserved. */
  free_share: number;
  largest_free: number;
  unplaced_blocks: number;
}
/** user | generated | library | native | interpreter | allocator | runtime (docs/frames.md). */
export type FrameKind = 'user' | 'generated' | 'library' | 'native' | 'interpreter' | 'allocator' | 'runtime';
export interface Frame {
  filename: string;
  line: number;
  name: string;
  kind: FrameKind;
  /** `name (short/path.py:line)`. */
  display: string;
  /** The FX node a frame of generated code ran (`augment_with_fx_traces`); null otherwise. */
  fx?: FxFrame | null;
}
export interface FxFrame {
  op: string | null;
  name: string | null;
  target: string | null;
  original_trace: string | null;
}
export interface EventDetail {
  device: number;
  index: number;
  action: string;
  addr: number;
  size: number;
  stream: number;
  time_us: number | null;
  allocated: number;
  active: number;
  reserved: number;
  requested: number;
  device_free: number | null;
  compile_context: string | null;
  user_metadata: string | null;
  /** The forward-pass traceback of a backward allocation (`forward_frames`). */
  forward_frames: string | null;
  /** forward | backward | optimizer | data | unknown */
  phase: string;
  /** The frame that names the event's stack, as shown (null without a stack). */
  label: string | null;
  /** Innermost first. */
  frames: Frame[];
  lifetime: Record<string, number | string | null> | null;
}
export interface Rows {
  columns: string[];
  rows: (number | string | null)[][];
  returned: number;
  has_more: boolean;
  truncated: boolean;
}
export interface Group {
  /** The naming frame as shown (`forward (adapters.py:588)`), or a synthetic `[...]` label. */
  label: string;
  /** A second line: the caller (with ` · via …`), or `freed at <frame>` for pre-window memory. */
  detail: string | null;
  /** `filename:line name` of the naming frame (hover title). */
  site: string | null;
  /** The whole stack, outermost first, one `filename:line name` per line. */
  stack: string | null;
  stack_id: number | null;
  origin: 'dynamic' | 'before_window' | 'other';
  blocks: number;
  bytes: number;
  requested_bytes: number;
  share: number;
}
export interface PeakAnalysis {
  device: number;
  event: number | null;
  /** True when the device has no trace events: the attribution is of the dump. */
  at_dump: boolean;
  peaks: PeakSet;
  counters_at_event: Counters;
  reserved_minus_active: number;
  reserved_minus_allocated: number;
  live_blocks: number;
  live_bytes: number;
  coverage: number;
  by_stack: Group[];
  by_top_frame: Group[];
  /** The live bytes by category at the same event (see CategoryBreakdown). */
  by_category: CategoryTotal[];
}
export interface CategoryTotal {
  category: string;
  bytes: number;
  blocks: number;
}
export interface FragAt {
  label: string;
  event: number | null;
  reserved: number;
  allocated: number;
  free_bytes: number;
  free_share: number;
  free_blocks: number;
  largest_free: number;
  fragmentation: number;
  rounding_waste: number;
  pending_free_bytes: number;
  segments: number;
  /** Segments with the most free bytes. */
  worst_segments: SegmentFrag[];
}
export interface SegmentFrag {
  address: number;
  size: number;
  free_bytes: number;
  free_blocks: number;
  largest_free: number;
  is_expandable: boolean;
}
export interface StackBytes {
  label: string;
  detail: string | null;
  site: string | null;
  stack: string | null;
  stack_id: number | null;
  blocks: number;
  bytes: number;
  first_event: number | null;
  last_event: number | null;
}
export interface LeakAnalysis {
  device: number;
  events: number;
  candidates: number;
  candidate_bytes: number;
  candidates_by_stack: StackBytes[];
  candidates_by_category: CategoryTotal[];
  pending_free_blocks: number;
  pending_free_bytes: number;
  before_window_blocks: number;
  before_window_bytes: number;
  before_window_stackless_bytes: number;
  long_lived_blocks: number;
  long_lived_bytes: number;
  floor: number[];
  floor_growth: number;
  floor_rises_steadily: boolean;
}
export interface OomCase {
  event: number;
  requested: number;
  device_free: number | null;
  counters: Counters;
  free_in_reserved: number;
  largest_free_block: number;
  top_stacks: Group[];
  events_before: { index: number; action: string; size: number; allocated: number }[];
  verdict: string;
  explanation: string;
  suggestions: string[];
}
/** The room at the dump, for a device without an OOM event. */
export interface DumpRoom {
  reserved: number;
  allocated: number;
  free_in_reserved: number;
  largest_free_block: number;
  pending_free_bytes: number;
  largest_request: { bytes: number; event: number } | null;
  /** One sentence to show as is. */
  summary: string;
}
export interface OomAnalysis {
  device: number;
  /** The first 100 OOMs; `ooms_total` counts them all. */
  ooms: OomCase[];
  ooms_total: number;
  /** Present when the device has no OOM event. */
  at_dump: DumpRoom | null;
}
export interface Finding {
  device: number;
  priority: 'high' | 'medium' | 'low' | 'info';
  category: string;
  title: string;
  evidence: string;
  suggestion: string;
  expected_effect: string;
}
export interface DeviceAnalysis {
  device: number;
  overview: DeviceOverview;
  peak: PeakAnalysis | null;
  fragment: { device: number; at: FragAt[] };
  leak: LeakAnalysis | null;
  oom: OomAnalysis;
  /** What the live memory is at the allocated peak (the dump for a dump-only device). */
  categories: CategoryBreakdown;
  /** Phases, ranges and steps (null for a SnapshotDB file: they need the replay). */
  steps: StepsAnalysis | null;
  /** Per-stream figures (null for a dump-only device or a SnapshotDB file). */
  streams: StreamsAnalysis | null;
  /** The recording simulated with expandable segments toggled (null for a dump-only device). */
  what_if: WhatIf | null;
  /** The previous step's gradients alive at a forward-pass peak (crate/src/analysis/held_gradients.rs). */
  held_gradients: HeldGradients | null;
  findings: Finding[];
}
export interface HeldGradients {
  peak_event: number;
  blocks: number;
  bytes: number;
  freed_from: number;
  freed_to: number;
}
/** One CUDA/NPU stream of a device (crate/src/analysis/streams.rs). */
export interface StreamInfo {
  /** The stream id as recorded (shown in hex). */
  stream: number;
  allocations: number;
  /** The largest active bytes allocated on this stream, and the event where it was. */
  peak_active: Peak;
  /** Active bytes of this stream at the device's allocated peak. */
  at_allocated_peak: number;
  /** The most bytes freed by the program but waiting on other streams, and when. */
  peak_pending_free: Peak;
  pending_free_at_dump: number;
}
/** The engine's `streams(device)`, also `analyze(...).streams`. */
export interface StreamsAnalysis {
  device: number;
  /** The 1,000 streams with the largest active peaks; `streams_total` counts them all. */
  streams: StreamInfo[];
  streams_total: number;
  truncated: boolean;
}
export interface BandBlock {
  lifetime: number;
  address: number;
  size: number;
  alloc_event: number | null;
  free_event: number | null;
  stack: number | null;
  /** The human label (or `allocated before the window; freed at …`). */
  site: string;
}
/** Live blocks per pixel column (the engine's `bands`): entries column_start[c]..column_start[c+1]. */
export interface Bands {
  from: number;
  to: number;
  column_event: number[];
  column_start: number[];
  entry_block: number[];
  entry_bottom: number[];
  other_bytes: number[];
  active: number[];
  blocks: BandBlock[];
}
export interface PeakSet {
  allocated: Peak;
  active: Peak;
  reserved: Peak;
  requested: Peak;
}
export interface StackDelta {
  label: string;
  detail: string | null;
  /** The full stack text the two files are matched by. */
  stack: string;
  bytes_a: number;
  bytes_b: number;
  delta: number;
  /** new | vanished | changed | same */
  change: string;
}
/** One row of a comparison: the figure in a, in b, and b − a (null where a side lacks the device). */
export interface ComparedFigure {
  label: string;
  unit: 'bytes' | 'count';
  a: number | null;
  b: number | null;
  delta: number | null;
}
export interface DeviceComparison {
  device: number;
  peaks_a: PeakSet | null;
  peaks_b: PeakSet | null;
  allocated_peak_delta: number | null;
  figures: ComparedFigure[];
  stacks: StackDelta[];
  /** Each category's bytes at the allocated peaks of a and b. */
  categories: CategoryDelta[];
}
export interface CategoryDelta {
  category: string;
  bytes_a: number;
  bytes_b: number;
  delta: number;
}
/** The engine's `compareWith`: a = the file whose view is open, b = the other; deltas are b − a. */
export interface Comparison {
  devices: DeviceComparison[];
}
export interface TemplateParam {
  name: string;
  type: 'int' | 'bool' | 'string';
  default: unknown;
  required: boolean;
  choices: string[] | null;
  description: string;
}
export interface TemplateColumn {
  name: string;
  unit: string | null;
}
/** A SnapshotDB table as the engine declares it (`schema()`; docs/schema.md is made from the same). */
export interface SchemaTable {
  name: string;
  /** What one row is. */
  row: string;
  columns: { name: string; type: string; unit: string; doc: string }[];
}
/** A query template of the engine's catalogue. */
export interface Template {
  name: string;
  category: string;
  /** How the engine answers it: 'sql', 'frame_tree'... */
  kind: string;
  description: string;
  params: TemplateParam[];
  columns: TemplateColumn[];
}
/** A template's answer: like Rows, with typed columns and the exact total. */
export interface TemplateRows {
  template: string;
  device: number;
  /** The parameters the query ran with, defaults filled in. */
  effective_params: Record<string, number | string | boolean | null>;
  columns: TemplateColumn[];
  rows: (number | string | null)[][];
  returned: number;
  has_more: boolean;
  truncated: boolean;
  /** Rows the query has in all. */
  total: number;
  total_is_exact: boolean;
}

// ---- semantics: categories, steps and phases (crate/src/analysis/{categories,steps,category_series}.rs)

/** One rule's part of a category: the blocks it decided, and why that rule says so. */
export interface RuleShare {
  rule: string;
  bytes: number;
  blocks: number;
  why: string;
}
export interface SiteShare {
  label: string;
  bytes: number;
  blocks: number;
}
export interface CategoryShare {
  category: string;
  bytes: number;
  blocks: number;
  /** bytes / the active counter (the engine computes it). */
  share: number;
  rules: RuleShare[];
  top_sites: SiteShare[];
}
/** The live memory by category right after `event` (null: the dump of a dump-only device). */
export interface CategoryBreakdown {
  device: number;
  event: number | null;
  /** A file without trace events: the figures are the dump's. */
  at_dump: boolean;
  /** The active counter there: the categories' bytes sum to it. */
  active: number;
  categories: CategoryShare[];
  finding: string | null;
}
/** Active memory by category at one event per column (`values[k][c]`: category c at `events[k]`). */
export interface CategorySeries {
  device: number;
  categories: string[];
  events: number[];
  values: number[][];
}
/** A category rule as the engine tries it (first match wins). */
export interface RuleInfo {
  name: string;
  category: string;
  file: string | null;
  function: string | null;
  frames: string;
  phase: string | null;
  lifetime: string;
  /** Exact block sizes in bytes the rule applies to (empty: any). */
  sizes: number[];
  why: string;
  origin: string;
}
/** A phase run (group 'phase') or a named range (record_function, optimizer, data…). */
export interface PhaseSpan {
  name: string;
  kind: 'run' | 'range';
  group: string;
  start_event: number | null;
  end_event: number | null;
  start_us: number | null;
  end_us: number | null;
  open: boolean;
}
export interface Step {
  step: number;
  first_event: number;
  last_event: number;
  complete: boolean;
  peak_allocated: Peak;
  peak_reserved: Peak;
  peak_phase: string;
  end_allocated: number;
  change_peak_allocated: number | null;
  change_end_allocated: number | null;
}
export interface Growth {
  /** growing | flat | shrinking | too_few_steps | no_steps … */
  verdict: string;
  bytes_per_step: number | null;
  steps_compared: number[];
  text: string;
}
export interface PeakPlace {
  event: number;
  step: number | null;
  phase: string;
}
export interface StepsAnalysis {
  device: number;
  phases: PhaseSpan[];
  framework_ranges: number;
  step_source: string | null;
  /** At most 10,000; steps_total counts them all. */
  steps: Step[];
  steps_total: number;
  /** phases holds at most 20,000 spans; phases_total counts them all. */
  phases_total: number;
  growth: Growth;
  peak_allocated_at: PeakPlace | null;
  peak_reserved_at: PeakPlace | null;
  program: Program;
}
/** What the trace shows the program doing (crate/src/analysis/steps.rs `Program`). */
export interface Program {
  /** training_steps | one_training_step | forward | model_build | dump_only | unknown */
  kind: string;
  training_steps: number;
  events_by_phase: { phase: string; events: number }[];
  text: string;
}

// ---- What if: the allocator simulator (crate/src/simulate) ----------------------------------

/** A simulated or recorded peak: bytes, and the event after which it is first reached. */
export interface SimPeak {
  bytes: number;
  /** null: before the first event (the window start). */
  event: number | null;
}
/** Every setting the simulator ran under (`Settings::describe`). */
export interface SimSettings {
  /** The alloc-conf string simulated, or "as recorded: …" for the recorded settings. */
  conf: string;
  expandable_segments: boolean;
  /** Bytes; null = unlimited. */
  max_split_size: number | null;
  max_non_split_rounding: number;
  /** Divisions of the power-of-two intervals from 1 MiB, 2 MiB, 4 MiB … (≤ 1: off). */
  roundup_power2_divisions: number[];
  /** 0 = off. */
  garbage_collection_threshold: number;
  large_segment_size: number;
  pad: number;
  npu_align: number;
  huge_pages: boolean;
}
export interface SimDifference {
  event: number;
  reason: string;
}
/** The first request the simulated device could not serve. */
export interface SimOom {
  event: number;
  /** The rounded request. */
  bytes: number;
  /** Simulated reserved bytes when it failed. */
  reserved: number;
  /** The recording ran out of memory at this event too. */
  recorded: boolean;
}
export interface SimCapacity {
  bytes: number;
  source: string;
}
/** The engine's `simulate(device, conf, deviceMemory)` (the CLI's `simulate --json` devices). */
export interface Simulation {
  device: number;
  settings: SimSettings;
  /** Simulated under the recording's own settings (the self-check). */
  as_recorded: boolean;
  /** null: nothing to compare (no segment events, or not the recorded settings). */
  reproduces_recording: boolean | null;
  first_difference: SimDifference | null;
  reserved_peak: SimPeak;
  allocated_peak: SimPeak;
  recorded_reserved_peak: SimPeak;
  segment_allocs: number;
  segment_frees: number;
  small_pool_at_reserved_peak: number;
  free_at_reserved_peak: number;
  largest_free_at_reserved_peak: number;
  /** The first event that would fail, "unknown capacity", or null (none within the capacity). */
  oom: number | 'unknown capacity' | null;
  oom_detail: SimOom | null;
  recorded_ooms_avoided: number[];
  capacity: SimCapacity | null;
  /** Events where the recording released its cache (empty_cache), applied in the simulation. */
  cache_releases: number[];
  notes: string[];
}
/** Recorded and simulated reserved bytes, the largest of events first..last. */
export interface SimLinePoint {
  first: number;
  last: number;
  recorded_max: number;
  simulated_max: number;
}
/** What the page's `simulate` answers: the simulation and its lines for a chart. */
export type SimulationLines = Simulation & { lines: SimLinePoint[] };
/** One setting of the standard set, built by the page from its simulation. */
export interface TuneRow {
  conf: string;
  label: string;
  reserved_peak: number;
  /** reserved_peak minus the as-recorded run's. */
  change: number;
  oom: number | 'unknown capacity' | null;
  segment_allocs: number;
  largest_free_at_reserved_peak: number;
}
/** The engine's `rankTune`: the rows best first and the one to try first. */
export interface Tuning {
  device: number;
  rows: TuneRow[];
  try_first: string | null;
  verdict: string;
}
/** The counterfactual the analyses cite: expandable segments toggled. */
export interface WhatIf {
  conf: string;
  reserved_peak: SimPeak;
  recorded_reserved_peak: SimPeak;
  /** Simulated minus recorded reserved peak. */
  change: number;
  ooms: OomWhatIf[];
  sentence: string;
}
export interface OomWhatIf {
  event: number;
  happens: boolean;
  sentence: string;
}

// ---- a distributed run: one snapshot per rank (`snapscope ranks`) ------------------------------

/** Who holds the memory at a rank's allocated peak: one allocation site or one category. */
export interface RankHolder {
  label: string;
  bytes: number;
  blocks: number;
}
/** One device of one rank's file, summarized (the engine's `rankSummary`). */
export interface RankDeviceSummary {
  device: number;
  events: number;
  peaks: PeakSet;
  /** `time_us` of the allocated peak's event, when the trace has times. */
  peak_time_us: number | null;
  oom_events: number[];
  /** Steps recognized (null: none). */
  steps: number | null;
  top_sites: RankHolder[];
  categories: RankHolder[];
}
/** One file of a run, summarized so that its engine can be closed (`rankSummary`, `--summary-out`). */
export interface FileSummary {
  file: string;
  /** From the file name (rank7, rank_7, rank-7); null when it has none. */
  rank: number | null;
  source_bytes: number;
  devices: RankDeviceSummary[];
}
export interface RankDeviceEntry {
  device: number;
  events: number;
  peaks: { allocated: Peak; reserved: Peak };
  peak_time_us: number | null;
  oom_events: number;
  steps: number | null;
}
export interface RankFileEntry {
  file: string;
  /** From the name, else the file's index in the order given. */
  rank: number;
  devices: RankDeviceEntry[];
}
/** One (file, device) figure and where it is. */
export interface RankAt {
  bytes: number;
  file: string;
  rank: number;
  device: number;
}
export interface RankOutlier {
  file: string;
  rank: number;
  device: number;
  bytes: number;
  /** Peak allocated bytes minus the median's. */
  above_median: number;
  /** Modified z-score (null when MAD = 0). */
  z: number | null;
}
/** An allocation site or category: bytes at the worst rank's peak, at the median rank's, and the change. */
export interface RankDelta {
  label: string;
  worst: number;
  median: number;
  delta: number;
}
export interface RankWorst {
  file: string;
  rank: number;
  device: number;
  median_file: string;
  median_rank: number;
  excess_bytes: number;
  top_sites: RankDelta[];
  categories: RankDelta[];
  sentence: string;
}
export interface RanksSummary {
  /** (file, device) pairs compared. */
  ranks: number;
  /** Said when the rank numbers could not be taken from the file names (newer engines). */
  note?: string | null;
  max: { allocated: RankAt | null; reserved: RankAt | null };
  median: { allocated: RankAt | null; reserved: RankAt | null };
  min: { allocated: RankAt | null; reserved: RankAt | null };
  /** max / median. */
  imbalance: { allocated: number | null; reserved: number | null };
  outliers: RankOutlier[];
  outlier_rule: string;
  worst: RankWorst | null;
}
export interface RankFileError {
  file: string;
  code: string;
  message: string;
}
/** `snapscope ranks FILES --json` (the body; the engine's `combineRanks`). */
export interface RanksReport {
  files: RankFileEntry[];
  summary: RanksSummary;
  errors: RankFileError[];
}
