// The visible event window of a chart (`from..to` of `total` events): wheel zoom around a point,
// drag pan, and answers applied only if no newer request was made since.

/** Zoom in (or out) by a fifth around event `at`, keeping it under the cursor. */
export function zoomAround(from: number, to: number, total: number, at: number, zoomIn: boolean): [number, number] {
  const span = to - from;
  const next = Math.max(20, Math.min(total - 1, Math.round(span * (zoomIn ? 0.8 : 1.25))));
  const start = Math.max(0, Math.round(at - ((at - from) / Math.max(1, span)) * next));
  const end = Math.min(total - 1, start + next);
  return [Math.max(0, end - next), end];
}

/** Pan a window that was `from..to` when the drag began by `dx` pixels of a `plotWidth` plot. */
export function panBy(from: number, to: number, total: number, dx: number, plotWidth: number): [number, number] {
  const span = to - from;
  const start = Math.max(0, Math.min(total - 1 - span, from + Math.round((dx / plotWidth) * span)));
  return [start, start + span];
}

/** Wrap requests so that only the newest one's answer comes back (older ones give undefined). */
export function newestOnly() {
  let latest = 0;
  return async <T>(request: Promise<T>): Promise<T | undefined> => {
    const mine = ++latest;
    const answer = await request;
    return mine === latest ? answer : undefined;
  };
}
