// Compare: two opened snapshots side by side (another run, another rank), device by device.
import type { ViewContext } from './index';
import type { DeviceOverview } from '../types';
import { bytes, bytesSpan, el, int } from '../ui/format';

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
  const draw = () => {
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
          el(
            'table',
            { class: 'grid' },
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                el('th', { text: '' }),
                el('th', { text: c.file.name }),
                el('th', { text: other.name }),
                el('th', { text: 'difference' }),
              ),
            ),
            el(
              'tbody',
              {},
              ...rows.map(([label, get]) => {
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
          ),
        );
      }),
    );
  };
  pick.addEventListener('change', draw);
  c.root.append(el('div', { class: 'toolbar' }, el('b', { text: `${c.file.name} compared with ` }), pick), out);
  draw();
}
