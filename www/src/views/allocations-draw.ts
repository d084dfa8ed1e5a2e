// Drawing the allocations chart: each block in its stack's colour (grey without a stack), the
// summed smaller blocks pale on top of each column, painted as pixels (./allocations-layout
// paintBands, in the worker with the answer when it can) and laid over the axis in one drawImage.
import { byteAxis, vline } from '../ui/canvas';
import { type Frame } from '../ui/plot';
import { paintedFor, xTicks, type BandScale, type BandsData } from './allocations-layout';
import { labelLeft } from './timeline-layout';

/** The chart, with a line at the selected event when it lies in the window. */
export function drawBands(
  g: CanvasRenderingContext2D,
  b: BandsData,
  s: BandScale,
  f: Frame,
  selected: number | null = null,
) {
  g.clearRect(0, 0, f.w, f.h);
  byteAxis(g, f, s.y, s.ticks);
  g.fillStyle = '#64748b';
  for (const t of xTicks(b, s, f)) {
    const w = g.measureText(t.label).width;
    g.fillText(t.label, labelLeft(t.x, w, f.pad.l - 8, f.w - 2), f.h - 6);
  }
  const ratio = g.getTransform().a || 1;
  const img = paintedFor(b, s, f, ratio);
  const layer = document.createElement('canvas');
  layer.width = img.width;
  layer.height = img.height;
  layer
    .getContext('2d')!
    .putImageData(new ImageData(new Uint8ClampedArray(img.pixels.buffer as ArrayBuffer), img.width, img.height), 0, 0);
  g.drawImage(layer, f.pad.l, f.pad.t, img.width / ratio, img.height / ratio);
  const cols = s.cols;
  if (selected !== null && cols && selected >= b.column_event[0] && selected <= b.column_event[cols - 1]) {
    // The last column at or before the event.
    let col = 0;
    while (col + 1 < cols && b.column_event[col + 1] <= selected) col++;
    vline(g, f.pad.l + (col + 0.5) * s.colW, f.pad.t, f.h - f.pad.b, '#dc2626', 2);
  }
}
