// The page's fonts resolved while it waits for a file. On Linux, the first text a renderer draws
// in a font (a family at one size, weight and style) costs it a synchronous round trip to the
// browser process for that font's rendering settings, 1–8 ms each (a trace shows them as
// FontCache::GetFontPlatformData). The Overview's first layout met dozens of them: 0.1–0.2 s
// between the overview's answer and its figures on screen, though it lays out 150 boxes.

/** Text with the characters the views print most (digits, units, the separators). */
const SAMPLE = 'Peak 0.9 MiB − · … → 12%';

/** Every font of the page's own rules: their sizes × weights × families, and italic at each size. */
export function pageFonts(rules: Iterable<CSSStyleDeclaration>, root: CSSStyleDeclaration): string[] {
  const sizes = new Set<string>([root.fontSize]);
  const weights = new Set<string>(['400', '700']);
  const families = new Set<string>([root.fontFamily]);
  for (const s of rules) {
    if (/^[\d.]+px$/.test(s.fontSize)) sizes.add(s.fontSize);
    if (/^\d+$/.test(s.fontWeight)) weights.add(s.fontWeight);
    else if (s.fontWeight === 'bold') weights.add('700');
    if (s.fontFamily && s.fontFamily !== 'inherit') families.add(s.fontFamily);
  }
  const out: string[] = [];
  for (const family of families)
    for (const size of sizes) {
      for (const weight of weights) out.push(`normal ${weight} ${size} ${family}`);
      out.push(`italic 400 ${size} ${family}`);
    }
  return out;
}

/** The style declarations of every rule of `sheets`, inside @media and other groups too. */
function* styleRules(sheets: StyleSheetList): Generator<CSSStyleDeclaration> {
  const walk = function* (list: CSSRuleList): Generator<CSSStyleDeclaration> {
    for (const r of list) {
      if (r instanceof CSSStyleRule) yield r.style;
      if ('cssRules' in r) yield* walk((r as CSSGroupingRule).cssRules);
    }
  };
  for (const sheet of sheets) {
    try {
      yield* walk(sheet.cssRules);
    } catch {
      // A sheet of another origin cannot be read: its fonts are resolved when first used.
    }
  }
}

/**
 * Lay text out once in every font of the page's stylesheets, off screen and in idle time only
 * (a few fonts per idle period, so a file chosen meanwhile is not kept waiting). Resolves when
 * done; the `snapscope:fonts-ready` mark says when (benchmarks report whether a load came after).
 */
export function warmFonts(doc: Document = document): Promise<void> {
  const fonts = pageFonts(styleRules(doc.styleSheets), getComputedStyle(doc.documentElement));
  const box = doc.createElement('div');
  box.setAttribute('aria-hidden', 'true');
  box.style.cssText = 'position:absolute;left:-10000px;top:0;visibility:hidden;white-space:nowrap';
  doc.body.append(box);
  const idle =
    window.requestIdleCallback ??
    ((f: IdleRequestCallback) => setTimeout(() => f({ didTimeout: true, timeRemaining: () => 8 }), 50));
  return new Promise((resolve) => {
    let next = 0;
    const slice: IdleRequestCallback = (deadline) => {
      do {
        const span = doc.createElement('span');
        span.style.font = fonts[next++];
        span.textContent = SAMPLE;
        box.append(span);
        // Reading a size lays the new text out now: the font is resolved in this slice.
        void span.offsetWidth;
      } while (next < fonts.length && deadline.timeRemaining() > 4);
      if (next < fonts.length) return void idle(slice);
      box.remove();
      performance.mark('snapscope:fonts-ready');
      resolve();
    };
    if (fonts.length) idle(slice);
    else resolve();
  });
}
