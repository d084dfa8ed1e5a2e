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
  events: number;
  segments_at_dump: number;
  expandable_segments_at_dump: number;
  allocator_rules: string;
  at_dump: Counters;
  at_window_start: Counters | null;
  at_last_event: Counters | null;
  peaks: { allocated: Peak; active: Peak; reserved: Peak; requested: Peak };
  window: {
    first_time_us: number | null;
    last_time_us: number | null;
    blocks_before_window: number;
    oom_events: number;
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
  devices: DeviceOverview[];
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
  free: number;
  largest_free: number;
  unplaced_blocks: number;
}
export interface Frame {
  filename: string;
  line: number;
  name: string;
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
