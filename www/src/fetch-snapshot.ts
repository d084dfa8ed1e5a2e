// Fetching a snapshot by URL for the page's ?src= and the web component's src: same origin and
// http(s) only, every failure an EngineFailure that says why.
import { EngineFailure } from './client';

/**
 * The bytes of a same-origin http(s) URL (?src=, the embedding API). Fails with an EngineFailure
 * that says why: a load that never settles would leave a docs portal's page at "loading" for good.
 */
export async function fetchSnapshot(url: string, param = '?src='): Promise<Blob> {
  const fail = (code: string, message: string, hint: string) => new EngineFailure({ code, message, hint });
  let u: URL;
  try {
    u = new URL(url, document.baseURI);
  } catch {
    throw fail('BAD_URL', `${url} is not a URL`, `use ${param}/path/to/snapshot.pickle`);
  }
  // file: (the single-file page opened from disk) has origin "null" like the page itself, and
  // blob: carries its creator's origin: neither can be fetched here, so only http(s) is tried.
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw fail(
      'UNSUPPORTED_URL',
      `${u.protocol} URLs cannot be opened with ${param}`,
      location.protocol === 'file:'
        ? 'a page opened from a file cannot fetch other files: open the snapshot with "Open…" or drop it here'
        : `snapscope fetches same-origin http(s) files (${param}/path/to/snapshot.pickle); open local files with "Open…"`,
    );
  if (u.origin !== location.origin)
    throw fail(
      'CROSS_ORIGIN',
      `${u.href} is not on this page's origin`,
      `snapscope only fetches same-origin files (${param}/path/to/snapshot.pickle)`,
    );
  let res: Response;
  try {
    res = await fetch(u.href);
    // A redirect to another origin is refused by the CSP (fetch rejects); this catches the rest.
    if (res.url && new URL(res.url).origin !== location.origin)
      throw fail(
        'CROSS_ORIGIN',
        `${u.pathname} redirected to ${res.url}, not this page's origin`,
        'link the file itself',
      );
    if (!res.ok) throw fail('FETCH_FAILED', `${u.pathname}: HTTP ${res.status}`, `check the ${param} path`);
    return await res.blob();
  } catch (e) {
    if (e instanceof EngineFailure) throw e;
    // A network error, a redirect the CSP blocked, a body cut short.
    throw fail(
      'FETCH_FAILED',
      `${u.pathname} could not be fetched (${e instanceof Error ? e.message : String(e)})`,
      `check the ${param} path; redirects to another origin are refused`,
    );
  }
}
