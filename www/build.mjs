// Build www/dist: app.js + worker.js + the wasm beside index.html, and one self-contained
// snapscope.html (worker and wasm inlined) that also works from file://.
// Expects the wasm-bindgen output in www/pkg (scripts/build.sh makes it).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
const dist = here + 'dist/';
mkdirSync(dist, { recursive: true });

// The release's version (the crate's): the page footer and the web component show it.
const version = readFileSync(here + '../crate/Cargo.toml', 'utf8').match(/^version = "(.*)"/m)[1];
const common = {
  bundle: true,
  minify: true,
  sourcemap: false,
  target: 'es2022',
  logLevel: 'warning',
  define: { __SNAPSCOPE_VERSION__: JSON.stringify(version) },
};
await build({ ...common, entryPoints: [here + 'src/main.ts'], outfile: dist + 'app.js', format: 'esm' });
// Classic (IIFE) worker: runs from a same-origin URL or from a Blob URL alike.
await build({
  ...common,
  entryPoints: [here + 'src/worker.ts'],
  outfile: dist + 'worker.js',
  format: 'iife',
  define: { 'import.meta.url': '""' },
});
copyFileSync(here + 'pkg/snapscope_bg.wasm', dist + 'snapscope_bg.wasm');
copyFileSync(here + 'style.css', dist + 'style.css');

// Network: only this origin (for ?src=) and blob: for the worker. No CDN, fonts or telemetry.
const CSP_SITE =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; connect-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'none'";
// The single file runs its two inline scripts by their SHA-256 (no 'unsafe-inline' scripts): an
// injected <script> could not run there either. Styles stay inline ('unsafe-inline' styles).
const CSP_SINGLE = (scriptHashes) =>
  `default-src 'none'; script-src ${scriptHashes} blob: 'wasm-unsafe-eval'; worker-src blob:; connect-src 'self' blob: data:; img-src data: blob:; style-src 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'none'`;
const meta = (csp) => `<meta http-equiv="Content-Security-Policy" content="${csp}">`;
const page = readFileSync(here + 'index.html', 'utf8').replace('<!--VERSION-->', version);
writeFileSync(dist + 'index.html', page.replace('<!--CSP-->', meta(CSP_SITE)));

// The HTML parser turns CR and CRLF into LF before the browser hashes a script, so the text is
// written that way (same meaning) and hashed as written.
const esc = (s) => s.replace(/<\/script/gi, '<\\/script').replace(/\r\n?/g, '\n');
const inline = {
  worker: readFileSync(dist + 'worker.js', 'utf8'),
  wasm: readFileSync(dist + 'snapscope_bg.wasm').toString('base64'),
};
const scripts = [
  esc(`globalThis.__SNAPSCOPE_INLINE__ = ${JSON.stringify(inline)};`),
  esc(readFileSync(dist + 'app.js', 'utf8')),
];
const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const single = page
  .replace('<!--CSP-->', () => meta(CSP_SINGLE(scripts.map(sha256).join(' '))))
  // Replacer functions: a replacement string would read `$'`, `$&`... in the code as patterns.
  .replace(
    '<link rel="stylesheet" href="style.css">',
    () => `<style>${readFileSync(here + 'style.css', 'utf8')}</style>`,
  )
  .replace(
    '<script type="module" src="app.js"></script>',
    () => `<script>${scripts[0]}</script>\n<script type="module">${scripts[1]}</script>`,
  );
writeFileSync(dist + 'snapscope.html', single);
console.log(
  `www/dist: index.html, app.js, worker.js, snapscope_bg.wasm, snapscope.html (${single.length.toLocaleString('en-US')} bytes)`,
);

// The web component for npm and docs portals (www/package): one ES module defining
// <snapscope-view>, with the page's style sheet for its shadow root, and the worker and the wasm
// beside it (found from the module's own URL).
const pkg = here + 'package/';
const pkgJson = JSON.parse(readFileSync(pkg + 'package.json', 'utf8'));
if (pkgJson.version !== version)
  throw new Error(`www/package/package.json is version ${pkgJson.version}, the crate ${version}: make them equal`);
const elementCss =
  readFileSync(here + 'style.css', 'utf8').replace(/:root\b/g, ':host') + readFileSync(here + 'element.css', 'utf8');
await build({
  ...common,
  entryPoints: [here + 'src/element.ts'],
  outfile: pkg + 'snapscope-view.js',
  format: 'esm',
  define: { ...common.define, __SNAPSCOPE_ELEMENT_CSS__: JSON.stringify(elementCss) },
});
copyFileSync(dist + 'worker.js', pkg + 'worker.js');
// The answer types the element's declarations refer to: generated from the engine's Rust types.
copyFileSync(here + 'src/generated/answers.ts', pkg + 'answers.d.ts');
copyFileSync(dist + 'snapscope_bg.wasm', pkg + 'snapscope_bg.wasm');
console.log(
  `www/package: snapscope-view.js, answers.d.ts, worker.js, snapscope_bg.wasm (npm package ${pkgJson.name}@${version})`,
);
