// One color per memory category, the same in the Categories view, the Timeline's stacked areas
// and their legends. The engine's built-in categories have fixed colors; a category named in a
// user's rules file gets one from a spare palette, chosen by its name (stable across renders).

export const UNKNOWN_COLOR = '#94a3b8';

const FIXED: Record<string, string> = {
  parameter: '#2563eb',
  gradient: '#7c3aed',
  'optimizer state': '#db2777',
  activation: '#f59e0b',
  'autograd temporary': '#fb923c',
  temporary: '#facc15',
  'input/data': '#16a34a',
  communication: '#0891b2',
  cache: '#14b8a6',
  persistent: '#64748b',
  unknown: UNKNOWN_COLOR,
};

/** Colors for categories from user rules: none of them close to the fixed ones or grey. */
const SPARE = ['#b91c1c', '#4d7c0f', '#1e3a8a', '#a21caf', '#0f766e', '#92400e', '#be123c', '#4338ca'];

/** The color of a category by its name. */
export function categoryColor(name: string): string {
  const fixed = FIXED[name];
  if (fixed) return fixed;
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h, 31) + name.charCodeAt(i)) >>> 0;
  return SPARE[h % SPARE.length];
}

/** Text that reads on a category's color: dark on the light ones, white on the others. */
export function categoryInk(name: string): string {
  const c = categoryColor(name);
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#0f172a' : '#ffffff';
}
