// Compare: two opened snapshots side by side (another run, another rank), device by device.
import type { ViewContext } from './index';
import type { DeviceOverview } from '../types';

interface StackDelta {
  label: string;
  bytes_a: number;
  bytes_b: number;
  delta: number;
  change: string;
}
import { bytes, bytesSpan, el, gridTable, int } from '../ui/format';

export async function renderCompare(c: ViewContext) {
  const others = c.app.files.map((f, i) => ({ f, i })).filter(({ f }) => f !== c.file);
  if (!others.length) {
    c.root.append(
      el(
        'div',
        { class: 'health ok' },
        el('strong', { text: 'Open a second snapshot to compare. ' }),
        'Drop another file on the page (or use Open…): this view then shows both side by side, device by device, with the differences.',
      ),
    );
    return;
  }
  const pick = el('select', {}, ...others.map(({ f, i }) => el('option', { value: i, text: f.name })));
  const out = el('div');
  const draw = async () => {
    const other = c.app.files[Number(pick.value)];
    const rows: [string, (d: DeviceOverview) => number][] = [
      ['events', (d) => d.events],
      ['peak allocated', (d) => d.peaks.allocated.bytes],
      ['peak active', (d) => d.peaks.active.bytes],
      ['peak reserved', (d) => d.peaks.reserved.bytes],
      ['peak requested', (d) => d.peaks.requested.bytes],
      ['allocated at dump', (d) => d.at_dump.allocated],
      ['reserved at dump', (d) => d.at_dump.reserved],
      ['segments at dump', (d) => d.segments_at_dump],
    ];
    const devices = [...new Set([...c.file.overview.devices, ...other.overview.devices].map((d) => d.device))].sort(
      (a, b) => a - b,
    );
    out.replaceChildren(
      ...devices.map((dev) => {
        const a = c.file.overview.devices.find((d) => d.device === dev);
        const b = other.overview.devices.find((d) => d.device === dev);
        return el(
          'section',
          {},
          el('h3', { text: `device ${dev}` }),
          gridTable(
            ['', c.file.name, other.name, 'difference'],
            rows.map(([label, get]) => {
              const va = a ? get(a) : null;
              const vb = b ? get(b) : null;
              const isBytes = label !== 'events' && label !== 'segments at dump';
              const cell = (v: number | null) =>
                el('td', { class: 'num' }, v === null ? '—' : isBytes ? bytesSpan(v) : int(v));
              const diff = va !== null && vb !== null ? vb - va : null;
              return el(
                'tr',
                {},
                el('th', { text: label }),
                cell(va),
                cell(vb),
                el('td', {
                  class: `num ${diff && diff > 0 ? 'worse' : diff && diff < 0 ? 'better' : ''}`,
                  text: diff === null ? '—' : `${diff > 0 ? '+' : ''}${isBytes ? bytes(diff) : int(diff)}`,
                }),
              );
            }),
          ),
        );
      }),
    );
    // Who holds the peak, stack by stack: the engine diffs the other file's attribution.
    for (const dev of devices) {
      if (!c.file.overview.devices.some((d) => d.device === dev && d.events > 0)) continue;
      if (!other.overview.devices.some((d) => d.device === dev && d.events > 0)) continue;
      const theirs = await other.client.call<Record<string, number>>('peakStacks', dev);
      const diff = await c.file.client.call<StackDelta[]>('compareStacks', dev, JSON.stringify(theirs));
      out.append(
        el('h4', { text: `device ${dev}: live memory at the allocated peak, by stack (largest change first)` }),
        gridTable(
          ['change', c.file.name, other.name, 'difference', 'stack (innermost frame)'],
          diff.map((d) =>
            el(
              'tr',
              {},
              el('td', { text: d.change }),
              el('td', { class: 'num' }, bytesSpan(d.bytes_a)),
              el('td', { class: 'num' }, bytesSpan(d.bytes_b)),
              el('td', {
                class: `num ${d.delta > 0 ? 'worse' : d.delta < 0 ? 'better' : ''}`,
                text: `${d.delta > 0 ? '+' : ''}${bytes(d.delta)}`,
              }),
              el('td', { title: d.label, text: d.label.split('\n').pop() ?? d.label }),
            ),
          ),
          'grid compact',
        ),
      );
    }
  };
  pick.addEventListener('change', () => void draw());
  c.root.append(el('div', { class: 'toolbar' }, el('b', { text: `${c.file.name} compared with ` }), pick), out);
  await draw();
}
