// The Timeline's picture over wall-clock time (issue 28 item 2), read from the canvas's pixels: a
// trace with known times (a JSON snapshot written here: 20 blocks of 2 MiB allocated one after
// another at irregular intervals, some with equal timestamps, then freed), drawn over the event
// index and over time. Over both axes the allocated line must hold the same value at the same
// events, and over time each allocation's step must stand at its time since the first event.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPage, shot, viewShown } from "./harness.mjs";

const MiB = 2 ** 20;
const A = 0x7f0000000000;
const T0 = 1_700_000_000_000_000;
// Gaps between events (µs), cycled: irregular, some zero (equal timestamps).
const GAPS = [3000, 1000, 0, 9000, 2000, 500, 6000];

/** The snapshot and every event's time_us. */
function snapshot() {
  const events = [];
  let t = T0;
  let g = 0;
  const push = (e) => {
    events.push({ ...e, stream: 0, frames: [], time_us: t });
    t += GAPS[g++ % GAPS.length];
  };
  push({ action: "segment_alloc", addr: A, size: 64 * MiB });
  for (let k = 0; k < 20; k++)
    push({ action: "alloc", addr: A + k * 2 * MiB, size: 2 * MiB });
  for (let k = 19; k >= 0; k--) {
    push({ action: "free_requested", addr: A + k * 2 * MiB, size: 2 * MiB });
    push({ action: "free_completed", addr: A + k * 2 * MiB, size: 2 * MiB });
  }
  const segment = {
    device: 0,
    address: A,
    total_size: 64 * MiB,
    allocated_size: 0,
    active_size: 0,
    requested_size: 0,
    stream: 0,
    segment_type: "large",
    segment_pool_id: [0, 0],
    is_expandable: false,
    frames: [],
    blocks: [
      {
        address: A,
        size: 64 * MiB,
        requested_size: 0,
        state: "inactive",
        frames: [],
      },
    ],
  };
  return {
    json: { segments: [segment], device_traces: [events] },
    times: events.map((e) => e.time_us),
  };
}

const { json, times } = snapshot();
const DIR = mkdtempSync(join(tmpdir(), "snapscope-time-"));
const FILE = join(DIR, "known_times.json");
writeFileSync(FILE, JSON.stringify(json));

let page, close, errors;
before(async () => {
  let state;
  ({ page, state, close, errors } = await openPage([FILE]));
  assert.equal(state, "ready");
  await page.click("[data-view=timeline]");
  await viewShown(page, "timeline");
});
after(async () => {
  await close?.();
  rmSync(DIR, { recursive: true, force: true });
});

/**
 * The chart as drawn: per pixel column, the topmost pixel of the allocated line's blue (below the
 * marker labels), and the plot's geometry.
 */
async function picture() {
  await page.waitForTimeout(150);
  return page.evaluate(() => {
    const cv = document.querySelector("canvas.chart");
    const g = cv.getContext("2d");
    const { width, height } = cv;
    const scale = width / cv.clientWidth;
    const px = g.getImageData(0, 0, width, height).data;
    const top = Math.round(60 * scale); // under the marker labels
    const y = [];
    for (let x = 0; x < width; x++) {
      let found = -1;
      for (let r = top; r < height; r++) {
        const o = (r * width + x) * 4;
        const [R, G, B, A] = [px[o], px[o + 1], px[o + 2], px[o + 3]];
        if (A > 200 && B > 180 && R < 90 && G < 140) {
          found = r / scale;
          break;
        }
      }
      y.push(found);
    }
    return { y, scale, cssWidth: cv.clientWidth };
  });
}

const PAD_L = 72;
const PAD_R = 12;

test("over time and over events the allocated line holds the same value at the same events", async () => {
  const n = times.length;
  const peak = await page.evaluate(
    () => window.snapscope.overview().devices[0].peaks.allocated.event,
  );
  const byEvents = await picture();
  const w = byEvents.cssWidth - PAD_L - PAD_R;
  const xByEvent = (i) => PAD_L + (i / (n - 1)) * w;
  await page.click("button:text('x: events')");
  const byTime = await picture();
  await shot(page, "timeline-known-times");
  const xByTime = (i) =>
    PAD_L + ((times[i] - times[0]) / (times[n - 1] - times[0])) * w;
  const at = (p, x) => p.y[Math.round(x * p.scale)];
  let compared = 0;
  for (let i = 0; i + 1 < n; i++) {
    // Read inside the event's column (it stands from its x to the next event's), away from the
    // peak marker, where the column is a few pixels wide on both axes.
    const [e0, e1] = [xByEvent(i), xByEvent(i + 1)];
    const [t0, t1] = [xByTime(i), xByTime(i + 1)];
    if (t1 - t0 < 4 || e1 - e0 < 4) continue;
    const near = (x) => Math.abs(x - xByEvent(peak)) < 6;
    const nearT = (x) => Math.abs(x - xByTime(peak)) < 6;
    const [ye, yt] = [at(byEvents, (e0 + e1) / 2), at(byTime, (t0 + t1) / 2)];
    if (near((e0 + e1) / 2) || nearT((t0 + t1) / 2)) continue;
    assert.ok(ye > 0 && yt > 0, `event ${i}: the line is drawn (${ye}, ${yt})`);
    assert.ok(
      Math.abs(ye - yt) <= 1,
      `event ${i}: y ${ye} over events, ${yt} over time`,
    );
    compared++;
  }
  assert.ok(compared >= 20, `${compared} events compared`);
  assert.deepEqual(errors, []);
});

test("over time each allocation's step stands at its time since the first event", async () => {
  const n = times.length;
  const p = await picture();
  const w = p.cssWidth - PAD_L - PAD_R;
  const xOf = (i) =>
    PAD_L + ((times[i] - times[0]) / (times[n - 1] - times[0])) * w;
  let checked = 0;
  // Events 1..20 allocate 2 MiB each: the line steps up where each one's column begins.
  for (let i = 2; i <= 20; i++) {
    const x = xOf(i);
    if (x - xOf(i - 1) < 4 || xOf(i + 1) - x < 4) continue;
    const before = p.y[Math.round((x - 2) * p.scale)];
    const after = p.y[Math.round((x + 2) * p.scale)];
    assert.ok(
      after < before - 2,
      `event ${i} at x ${x.toFixed(1)}: the line rises there (y ${before} → ${after})`,
    );
    // And nowhere else between the previous event and this one: flat, no slope, no zigzag.
    const from = xOf(i - 1) + 2;
    const flat = [];
    for (let xx = from; xx < x - 2; xx++)
      flat.push(p.y[Math.round(xx * p.scale)]);
    assert.ok(
      Math.max(...flat) - Math.min(...flat) <= 1,
      `event ${i - 1}: its column is level (${Math.min(...flat)}..${Math.max(...flat)})`,
    );
    checked++;
  }
  assert.ok(checked >= 6, `${checked} allocations checked`);
});
