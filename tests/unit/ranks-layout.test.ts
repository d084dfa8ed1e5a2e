// The Ranks view's pure part: which files of a folder are snapshots and in what order, how many
// engines summarize at once, names made unique, the report's units in rank order with their
// outlier / worst / median marks, the bar geometry and hit test, label thinning and placement,
// and the figures in words.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  RANKS_PAD,
  MIN_GROUP,
  barAt,
  barCentre,
  barGeometry,
  chartWidth,
  folderSnapshots,
  imbalanceText,
  isSnapshotName,
  labelStep,
  manyDevices,
  nameAt,
  outlierText,
  peakAt,
  placeLabels,
  poolSize,
  rankSpans,
  rankUnits,
  signedBytes,
  uniqueNames,
  unitName,
} from "../../www/src/views/ranks-layout";
import type { RankDeviceEntry, RanksReport } from "../../www/src/types";

const MIB = 2 ** 20;

const dev = (
  device: number,
  allocated: number,
  reserved = allocated,
  events = 10,
): RankDeviceEntry => ({
  device,
  events,
  peaks: {
    allocated: { bytes: allocated, event: events ? 3 : null },
    reserved: { bytes: reserved, event: events ? 2 : null },
  },
  peak_time_us: null,
  oom_events: 0,
  steps: null,
});

/**
 * Ranks given out of order (10, 2, 7), a file of two devices (one never used) and a file without
 * any device.
 */
function report(): RanksReport {
  return {
    files: [
      { file: "rank10.pickle", rank: 10, devices: [dev(0, 100 * MIB)] },
      { file: "rank2.pickle", rank: 2, devices: [dev(0, 104 * MIB)] },
      {
        file: "rank7.pickle",
        rank: 7,
        devices: [dev(0, 400 * MIB, 512 * MIB)],
      },
      {
        file: "rank3.pickle",
        rank: 3,
        devices: [dev(1, 102 * MIB), dev(0, 0, 0, 0)],
      },
      { file: "rank5.pickle", rank: 5, devices: [] },
    ],
    summary: {
      ranks: 4,
      max: { allocated: null, reserved: null },
      median: {
        allocated: {
          bytes: 102 * MIB,
          file: "rank3.pickle",
          rank: 3,
          device: 1,
        },
        reserved: null,
      },
      min: { allocated: null, reserved: null },
      imbalance: { allocated: 3.92, reserved: 5 },
      outliers: [
        {
          file: "rank7.pickle",
          rank: 7,
          device: 0,
          bytes: 400 * MIB,
          above_median: 298 * MIB,
          z: 101.175,
        },
      ],
      outlier_rule: "rule",
      worst: {
        file: "rank7.pickle",
        rank: 7,
        device: 0,
        median_file: "rank3.pickle",
        median_rank: 3,
        excess_bytes: 298 * MIB,
        top_sites: [],
        categories: [],
        sentence: "rank 7 holds more.",
      },
    },
    errors: [],
  };
}

test("snapshot names: the five extensions, any case; hidden files and others are not", () => {
  for (const n of [
    "rank0.pickle",
    "a/b/RANK1.PKL",
    "x.pt",
    "snap.json",
    "snap.pickle.gz",
  ])
    assert.ok(isSnapshotName(n), n);
  for (const n of [
    "PROVENANCE.md",
    "LICENSE.txt",
    "run/.DS_Store",
    "._rank0.pickle",
    "pickle",
    "notes.pickle.txt",
  ])
    assert.ok(!isSnapshotName(n), n);
});

test("a folder's snapshots in path order (as the CLI sorts), the rest skipped", () => {
  const got = folderSnapshots([
    { path: "run/rank10.pickle" },
    { path: "run/README.md" },
    { path: "run/rank2.pickle" },
    { path: "run/b/rank1.pkl" },
    { path: "run/Z.json" },
  ]).map((f) => f.path);
  // Code-unit order: "Z" < "b" < "r", "rank10" < "rank2" (no natural sort, like the CLI).
  assert.deepEqual(got, [
    "run/Z.json",
    "run/b/rank1.pkl",
    "run/rank10.pickle",
    "run/rank2.pickle",
  ]);
});

test("engines at once: one per core, at least 1, at most 4", () => {
  assert.equal(poolSize(2), 2);
  assert.equal(poolSize(1), 1);
  assert.equal(poolSize(16), 4);
  assert.equal(poolSize(0), 1);
  assert.equal(poolSize(undefined), 1);
  assert.equal(poolSize(NaN), 1);
  assert.equal(poolSize(3.7), 3);
});

test("names made unique in the order given; unique names stay", () => {
  assert.deepEqual(
    uniqueNames([
      "memory_snapshot.pickle",
      "rank1.pickle",
      "memory_snapshot.pickle",
      "memory_snapshot.pickle",
    ]),
    [
      "memory_snapshot.pickle",
      "rank1.pickle",
      "memory_snapshot.pickle (2)",
      "memory_snapshot.pickle (3)",
    ],
  );
  // A name that already reads like a suffixed one is not given twice.
  assert.deepEqual(uniqueNames(["a (2)", "a", "a"]), ["a (2)", "a", "a (3)"]);
});

test("units by rank then device; outlier, worst and median marked; unused devices not counted", () => {
  const u = rankUnits(report());
  assert.deepEqual(
    u.map((x) => [x.rank, x.device]),
    [
      [2, 0],
      [3, 0],
      [3, 1],
      [5, null],
      [7, 0],
      [10, 0],
    ],
  );
  const r7 = u.find((x) => x.rank === 7)!;
  assert.equal(r7.file, 2);
  assert.equal(r7.allocated, 400 * MIB);
  assert.equal(r7.reserved, 512 * MIB);
  assert.equal(r7.allocatedEvent, 3);
  assert.ok(r7.outlier && r7.worst && !r7.median);
  const median = u.filter((x) => x.median);
  assert.deepEqual(
    median.map((x) => [x.rank, x.device]),
    [[3, 1]],
  );
  assert.deepEqual(
    u.filter((x) => !x.counted).map((x) => [x.rank, x.device]),
    [
      [3, 0],
      [5, null],
    ],
  );
  assert.equal(
    u.filter((x) => x.outlier).length,
    1,
    "only rank 7 is an outlier",
  );
});

test("a unit names its device only when its file holds several compared devices", () => {
  const u = rankUnits(report());
  // rank3's device 0 has no events: one compared device per file.
  assert.equal(manyDevices(u), false);
  assert.deepEqual(u.map(unitName), [
    "rank 2",
    "rank 3",
    "rank 3",
    "rank 5",
    "rank 7",
    "rank 10",
  ]);
  const r = report();
  r.files[3].devices[1] = dev(0, 50 * MIB);
  const v = rankUnits(r);
  assert.equal(manyDevices(v), true);
  assert.equal(unitName(v[1]), "rank 3 · device 0");
  assert.equal(unitName(v[0]), "rank 2", "a one-device file stays plain");
  assert.equal(nameAt(v, "rank3.pickle", 3, 1), "rank 3 · device 1");
  assert.equal(nameAt(v, "rank7.pickle", 7, 0), "rank 7");
  assert.equal(nameAt(v, "gone.pickle", 9, 0), "rank 9");
});

test("bar geometry: groups fill the plot, the bar under x, nothing outside", () => {
  const f = { w: 72 + 16 + 640, h: 300, pad: RANKS_PAD };
  const g = barGeometry(64, f);
  assert.equal(g.left, 72);
  assert.equal(g.group, 10);
  assert.ok(g.allocatedWidth < g.reservedWidth && g.reservedWidth <= g.group);
  assert.equal(barCentre(g, 7), 72 + 75);
  assert.equal(barAt(g, 64, barCentre(g, 7)), 7);
  assert.equal(barAt(g, 64, 72), 0);
  assert.equal(barAt(g, 64, 72 + 639.9), 63);
  assert.equal(barAt(g, 64, 71), null);
  assert.equal(barAt(g, 64, 72 + 640), null);
  // A wide group keeps its bars readable (at most 48 px).
  assert.equal(barGeometry(2, f).reservedWidth, 48);
});

test("the chart grows past its box (and scrolls) only for many ranks", () => {
  assert.equal(chartWidth(64, 1200), 1200);
  assert.equal(chartWidth(1024, 1200), 72 + 16 + 1024 * MIN_GROUP);
});

test("rank labels thinned to 1, 2, 5 × 10^k so that none overlaps the next", () => {
  assert.equal(labelStep(20, 10), 1);
  assert.equal(labelStep(10, 10), 2);
  assert.equal(labelStep(5, 14), 5);
  assert.equal(labelStep(1.2, 20), 50);
  assert.equal(labelStep(0.5, 20), 100);
});

test("bars of one rank's devices form one span under its label", () => {
  assert.deepEqual(rankSpans([0, 1, 1, 1, 2, 7, 7]), [
    { rank: 0, from: 0, to: 0 },
    { rank: 1, from: 1, to: 3 },
    { rank: 2, from: 4, to: 4 },
    { rank: 7, from: 5, to: 6 },
  ]);
  assert.deepEqual(rankSpans([]), []);
});

test("labels above bars: kept inside the plot, the first ones win, none overlaps", () => {
  const got = placeLabels(
    [
      { x: 100, width: 40, id: "a" },
      { x: 110, width: 40, id: "b" },
      { x: 5, width: 40, id: "c" },
      { x: 995, width: 40, id: "d" },
    ],
    0,
    1000,
  );
  assert.deepEqual(
    got.map((l) => [l.id, l.left]),
    [
      ["a", 80],
      ["c", 0],
      ["d", 960],
    ],
  );
});

test("the figures in words: imbalance, outliers, signed bytes, the peak's place", () => {
  assert.equal(imbalanceText(3.830188679245283), "3.83× the median");
  assert.equal(imbalanceText(148.2), "148× the median");
  assert.equal(imbalanceText(null), "—");
  const o = report().summary.outliers[0];
  assert.equal(
    outlierText(o),
    "+298.00 MiB above the median (modified z-score 101)",
  );
  assert.equal(
    outlierText({ ...o, above_median: -99 * MIB, z: null }),
    "−99.00 MiB below the median",
  );
  assert.equal(signedBytes(300 * MIB), "+300.00 MiB");
  assert.equal(signedBytes(-1536), "−1.50 KiB");
  assert.equal(signedBytes(0), "0 B");
  assert.equal(peakAt(5701), "event 5,701");
  assert.equal(peakAt(null), "window start");
});
