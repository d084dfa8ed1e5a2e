// CSV for spreadsheets (pure: no DOM; tests/unit). Cells are quoted when they hold a quote, comma
// or line break, and cells a spreadsheet would run as a formula are neutralised.

/**
 * A cell starting with = + - @ (or a tab or carriage return, which some tools skip before such a
 * sign) is a formula to Excel, LibreOffice and Google Sheets: a frame name like
 * `=HYPERLINK("http://…")` would run when the export is opened. A leading ' makes it text (OWASP's
 * advice). Numbers stay numbers: only strings are neutralised, so -5 is still -5.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A header line and one line per row, CRLF-free (`\n`), every cell through `csvCell`. */
export function toCsv(columns: string[], rows: unknown[][]): string {
  return [columns, ...rows].map((r) => r.map(csvCell).join(',')).join('\n');
}
