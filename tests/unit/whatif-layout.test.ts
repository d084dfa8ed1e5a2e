// What if, the pure part: the alloc-conf string the form makes against the recorded settings,
// the divisions syntax both ways, sizes as people type them, and the sentences of the summary.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildConf,
  changeText,
  chartMax,
  columnSpans,
  deviceMemoryOf,
  divisionsText,
  eventList,
  forThePage,
  formFromConf,
  formOf,
  healthOf,
  oomCell,
  oomVerdict,
  parseBytes,
  parseDivisions,
  pointAt,
  settingsLabel,
  splitConf,
  withSeparators,
  type FormValues,
} from "../../www/src/views/whatif-layout";
import type { SimSettings } from "../../www/src/types";

const MIB = 2 ** 20;
const GIB = 2 ** 30;

/** The recorded settings of npu/snapshot_with_empty_cache.pkl (the engine's `settings`). */
const npu: SimSettings = {
  conf: "as recorded: (defaults)",
  expandable_segments: false,
  max_split_size: null,
  max_non_split_rounding: 20 * MIB,
  roundup_power2_divisions: new Array(16).fill(0),
  garbage_collection_threshold: 0,
  large_segment_size: 20 * MIB,
  pad: 32,
  npu_align: 16384,
  huge_pages: false,
};
const recorded = formOf(npu);
const edit = (v: Partial<FormValues>, base = recorded) => ({ ...base, ...v });

test("the form starts from the recorded settings, as field text", () => {
  assert.deepEqual(recorded, {
    expandable: false,
    maxSplitMb: "",
    maxNonSplitMb: "20",
    divisions: "",
    gcThreshold: "",
  });
  const tuned = formOf({
    ...npu,
    expandable_segments: true,
    max_split_size: 512 * MIB,
    roundup_power2_divisions: new Array(16).fill(4),
    garbage_collection_threshold: 0.8,
  });
  assert.deepEqual(tuned, {
    expandable: true,
    maxSplitMb: "512",
    maxNonSplitMb: "20",
    divisions: "4",
    gcThreshold: "0.8",
  });
});

test("an untouched form asks for the recorded settings: the empty string", () => {
  assert.equal(buildConf(recorded, recorded), "");
  // The same values written differently are no change either.
  const limited = edit({ maxSplitMb: "512", divisions: "4" });
  assert.equal(
    buildConf(
      edit({ maxSplitMb: " 512.0 ", divisions: "[1:4,>:4]" }, limited),
      limited,
    ),
    "",
  );
  assert.equal(buildConf(edit({ divisions: "1" }), recorded), "");
  assert.equal(buildConf(edit({ gcThreshold: "0" }), recorded), "");
});

test("only the keys that differ from the recorded values go into the string, in a fixed order", () => {
  assert.equal(
    buildConf(edit({ expandable: true }), recorded),
    "expandable_segments:True",
  );
  assert.equal(
    buildConf(
      edit({
        gcThreshold: "0.6",
        divisions: "[256:1, 512:2, >:4]",
        maxSplitMb: "256",
        expandable: true,
      }),
      recorded,
    ),
    "expandable_segments:True,max_split_size_mb:256,roundup_power2_divisions:[256:1,512:2,>:4],garbage_collection_threshold:0.6",
  );
  assert.equal(
    buildConf(edit({ maxNonSplitMb: "64" }), recorded),
    "max_non_split_rounding_mb:64",
  );
  // Recorded with expandable segments: unchecking asks for False.
  const expandable = edit({ expandable: true });
  assert.equal(buildConf(recorded, expandable), "expandable_segments:False");
});

test("clearing a field: unlimited split size, divisions off, the recorded rounding kept", () => {
  const limited = edit({ maxSplitMb: "512", divisions: "4" });
  assert.equal(
    buildConf(edit({ maxSplitMb: "" }, limited), limited),
    "max_split_size_mb:-1",
  );
  assert.equal(
    buildConf(edit({ divisions: "" }, limited), limited),
    "roundup_power2_divisions:1",
  );
  assert.equal(buildConf(edit({ maxNonSplitMb: "" }), recorded), "");
});

test("pairs the form has no field for stay in the string", () => {
  assert.equal(
    buildConf(edit({ expandable: true }), recorded, ["page_size:1g"]),
    "expandable_segments:True,page_size:1g",
  );
  const { values, extra } = formFromConf(
    "page_size:1g, max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
    recorded,
  );
  assert.deepEqual(extra, ["page_size:1g"]);
  assert.equal(values.maxSplitMb, "128");
  assert.equal(values.divisions, "[256:1,512:2,1024:4,>:8]");
  assert.equal(values.expandable, false);
  // Read back, the string is the same settings.
  assert.equal(
    buildConf(values, recorded, extra),
    "max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,1024:4,>:8],page_size:1g",
  );
});

test("each setting of the standard set fills the form and comes back unchanged", () => {
  for (const conf of [
    "expandable_segments:True",
    "max_split_size_mb:128",
    "max_split_size_mb:512",
    "roundup_power2_divisions:4",
    "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
    "garbage_collection_threshold:0.6",
  ]) {
    const { values, extra } = formFromConf(conf, recorded);
    assert.deepEqual(extra, [], conf);
    assert.equal(buildConf(values, recorded, extra), conf);
  }
  const off = formFromConf(
    "expandable_segments:False",
    edit({ expandable: true }),
  );
  assert.equal(off.values.expandable, false);
  assert.equal(
    formFromConf("max_split_size_mb:-1", recorded).values.maxSplitMb,
    "",
  );
});

test("alloc-conf pairs split at commas outside brackets", () => {
  assert.deepEqual(
    splitConf(
      " expandable_segments:True ,roundup_power2_divisions:[256:1,>:4],,backend",
    ),
    [
      ["expandable_segments", "True"],
      ["roundup_power2_divisions", "[256:1,>:4]"],
      ["backend", ""],
    ],
  );
  assert.deepEqual(splitConf(""), []);
});

test("divisions: PyTorch's syntax read as the allocator does, and written back to the same list", () => {
  const standard = parseDivisions("[256:1,512:2,1024:4,>:8]")!;
  assert.deepEqual(standard, [1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8]);
  assert.equal(divisionsText(standard), "[256:1,512:2,1024:4,>:8]");
  assert.deepEqual(parseDivisions("4"), new Array(16).fill(4));
  assert.deepEqual(parseDivisions(""), new Array(16).fill(0));
  // An interval not named stays 0, as in PyTorch.
  assert.deepEqual(
    parseDivisions("[1:2,4:8]"),
    [2, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
  );
  for (const bad of ["3", "[256:3]", "[300:2]", "[256]", "four", "[256:1,>:x]"])
    assert.equal(parseDivisions(bad), null, bad);
  assert.equal(divisionsText(new Array(16).fill(0)), "");
  assert.equal(divisionsText(new Array(16).fill(1)), "");
  assert.equal(divisionsText(new Array(16).fill(4)), "4");
  // Any list comes back as itself.
  const lists = [
    [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8],
    [2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4],
    [1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2],
    [8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16],
  ];
  for (const d of lists) assert.deepEqual(parseDivisions(divisionsText(d)), d);
});

test("device memory as people type it: binary and decimal units, like the CLI's --device-memory", () => {
  assert.equal(parseBytes("80GiB"), 80 * GIB);
  assert.equal(parseBytes("80 GiB"), 80 * GIB);
  assert.equal(parseBytes("80gb"), 80e9);
  assert.equal(parseBytes("80 GB"), 80e9);
  assert.equal(parseBytes("81920MiB"), 80 * GIB);
  assert.equal(parseBytes("512 MB"), 512e6);
  assert.equal(parseBytes("1.5GiB"), 1.5 * GIB);
  assert.equal(parseBytes("85899345920"), 80 * GIB);
  assert.equal(parseBytes("4096 bytes"), 4096);
  assert.equal(parseBytes("64G"), 64 * GIB);
  for (const bad of [
    "",
    "lots",
    "-5GiB",
    "0",
    "GiB",
    "80 GiBs",
    "8e10",
    "1,024",
  ])
    assert.equal(parseBytes(bad), null, bad);
  assert.equal(deviceMemoryOf("  "), 0, "empty: from a recorded OOM");
  assert.equal(deviceMemoryOf("80GiB"), 80 * GIB);
  assert.equal(deviceMemoryOf("eighty"), null);
});

test("the OOM verdict in words", () => {
  assert.equal(
    oomVerdict({
      oom: 421,
      oom_detail: {
        event: 421,
        bytes: 5308694528,
        reserved: 84202749952,
        recorded: true,
      },
      capacity: { bytes: 84298432512, source: "…" },
    }),
    "would run out of memory at event 421 (4.94 GiB requested, 78.42 GiB reserved)",
  );
  assert.equal(
    oomVerdict({
      oom: 12345,
      oom_detail: {
        event: 12345,
        bytes: 2 * GIB,
        reserved: 79 * GIB,
        recorded: false,
      },
      capacity: { bytes: 80 * GIB, source: "given" },
    }),
    "would run out of memory at event 12,345 (2.00 GiB requested, 79.00 GiB reserved)",
  );
  assert.equal(
    oomVerdict({ oom: "unknown capacity", oom_detail: null, capacity: null }),
    "OOM: unknown capacity — give the device memory",
  );
  assert.equal(
    oomVerdict({
      oom: null,
      oom_detail: null,
      capacity: { bytes: 80 * GIB, source: "given" },
    }),
    "no out-of-memory within 80.00 GiB",
  );
  assert.equal(oomCell(7453), "at event 7,453");
  assert.equal(oomCell(null), "none");
  assert.equal(oomCell("unknown capacity"), "unknown capacity");
});

test("the health line: reproduces, first difference (event said once), nothing to check", () => {
  assert.deepEqual(
    healthOf({ reproduces_recording: true, first_difference: null }),
    {
      kind: "ok",
      text: "The simulator reproduces this recording exactly",
    },
  );
  assert.deepEqual(
    healthOf({
      reproduces_recording: false,
      first_difference: {
        event: 12000,
        reason:
          "at event 12000 the simulation maps 100.00 MiB (segment_map); the recording does not",
      },
    }),
    {
      kind: "warn",
      text: "The simulator first differs at event 12,000: the simulation maps 100.00 MiB (segment_map); the recording does not",
    },
  );
  assert.equal(
    healthOf({
      reproduces_recording: false,
      first_difference: {
        event: 7,
        reason: "reserved after event 7: recorded 1 B, simulated 2 B",
      },
    }).text,
    "The simulator first differs at event 7: reserved after event 7: recorded 1 B, simulated 2 B",
  );
  assert.deepEqual(
    healthOf({ reproduces_recording: null, first_difference: null }),
    {
      kind: "info",
      text: "Nothing to check: the trace has no segment events",
    },
  );
});

test("changes, labels and engine sentences for the page", () => {
  assert.equal(changeText(-18 * MIB, 632 * MIB), "−18.00 MiB (−2.8%)");
  assert.equal(changeText(74 * MIB, 632 * MIB), "+74.00 MiB (+11.7%)");
  assert.equal(changeText(0, 632 * MIB), "no change");
  assert.equal(changeText(MIB, 0), "+1.00 MiB");
  assert.equal(settingsLabel(npu, true), "as recorded (PyTorch defaults)");
  assert.equal(
    settingsLabel(
      { ...npu, conf: "as recorded: expandable_segments:True" },
      true,
    ),
    "as recorded (expandable_segments:True)",
  );
  assert.equal(
    settingsLabel({ ...npu, conf: "max_split_size_mb:128" }, false),
    "max_split_size_mb:128",
  );
  assert.equal(
    withSeparators("at event 7453 the recording; events 12000 and 5"),
    "at event 7,453 the recording; events 12,000 and 5",
  );
  assert.equal(
    forThePage(
      "garbage_collection_threshold needs the device capacity: not simulated without --device-memory",
    ),
    "garbage_collection_threshold needs the device capacity: not simulated without the device memory field",
  );
  assert.equal(eventList([2934]), "event 2,934");
  assert.equal(eventList([1, 2, 3, 4], 2), "events 1, 2 and 2 more");
});

test("the chart: its top, the capacity only when near, columns and the point under the cursor", () => {
  const points = [
    { first: 0, last: 9, recorded_max: 100, simulated_max: 80 },
    { first: 10, last: 19, recorded_max: 200, simulated_max: 250 },
    { first: 20, last: 29, recorded_max: 150, simulated_max: 150 },
  ];
  assert.deepEqual(chartMax(points, null), { max: 250, capacityShown: false });
  assert.deepEqual(chartMax(points, 300), { max: 300, capacityShown: true });
  assert.deepEqual(chartMax(points, 10_000), {
    max: 250,
    capacityShown: false,
  });
  const spans = columnSpans(points, (i) => i * 10, 30, 295);
  assert.deepEqual(
    spans.map((s) => [s.x0, s.x1]),
    [
      [0, 100],
      [100, 200],
      [200, 295],
    ],
  );
  assert.equal(pointAt(points, 0), 0);
  assert.equal(pointAt(points, 15), 1);
  assert.equal(pointAt(points, 99), 2);
  assert.equal(pointAt([], 3), -1);
});
