// The packet capture part of analyze_link_capture's tool card: protocol counts as a small bar
// chart and the conversations as a table, from the result's metadata.capture. The chart is SVG
// drawn with attributes only, so the page's strict CSP (no inline styles) holds.

import { h, svg } from './dom.js';

const BAR_HEIGHT = 18;
const GAP = 6;
const LABEL_WIDTH = 96;
const CHART_WIDTH = 420;
const MAX_BARS = 12;

/** protocolBars turns the protocol counts into bars: widths relative to the largest count. */
export function protocolBars(protocols, width = CHART_WIDTH - LABEL_WIDTH - 48) {
  const list = (Array.isArray(protocols) ? protocols : [])
    .filter((p) => p && typeof p === 'object' && Number(p.packets) > 0)
    .map((p) => ({ protocol: String(p.protocol || '?'), packets: Number(p.packets), bytes: Number(p.bytes) || 0 }))
    .sort((a, b) => b.packets - a.packets || a.protocol.localeCompare(b.protocol));
  const shown = list.slice(0, MAX_BARS);
  if (list.length > MAX_BARS) {
    const rest = list.slice(MAX_BARS);
    shown.push({ protocol: `${rest.length} more`, packets: rest.reduce((n, p) => n + p.packets, 0), bytes: 0 });
  }
  const top = Math.max(1, ...shown.map((p) => p.packets));
  return shown.map((p) => ({ ...p, width: Math.max(2, Math.round((p.packets / top) * width)) }));
}

function chart(protocols) {
  const bars = protocolBars(protocols);
  const height = bars.length * (BAR_HEIGHT + GAP);
  const label = 'Packets per protocol: ' + bars.map((b) => `${b.protocol} ${b.packets}`).join(', ');
  const el = svg('svg', { class: 'capture-chart', viewBox: `0 0 ${CHART_WIDTH} ${height}`, width: CHART_WIDTH, height, role: 'img', 'aria-label': label });
  bars.forEach((b, i) => {
    const y = i * (BAR_HEIGHT + GAP);
    const row = svg('g', { class: 'capture-bar', 'data-protocol': b.protocol, 'data-packets': b.packets });
    const name = svg('text', { x: LABEL_WIDTH - 8, y: y + BAR_HEIGHT - 5, 'text-anchor': 'end', class: 'capture-bar-label' });
    name.textContent = b.protocol;
    const title = svg('title');
    title.textContent = `${b.protocol}: ${b.packets} packet${b.packets === 1 ? '' : 's'}` + (b.bytes ? `, ${b.bytes} bytes` : '');
    const count = svg('text', { x: LABEL_WIDTH + b.width + 6, y: y + BAR_HEIGHT - 5, class: 'capture-bar-count' });
    count.textContent = String(b.packets);
    row.append(title, name, svg('rect', { x: LABEL_WIDTH, y, width: b.width, height: BAR_HEIGHT, rx: 3, class: 'capture-bar-rect' }), count);
    el.append(row);
  });
  return el;
}

function conversationTable(conversations) {
  const rows = (Array.isArray(conversations) ? conversations : []).filter((c) => c && typeof c === 'object');
  if (!rows.length) return h('p', { class: 'muted capture-none', text: 'No conversations.' });
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'capture-conversations' },
      h('caption', { class: 'visually-hidden', text: 'Conversations: who talked to whom' }),
      h('thead', {}, h('tr', {}, ['Endpoint A', 'Endpoint B', 'Packets', 'Bytes', 'Protocols'].map((t) => h('th', { scope: 'col', text: t })))),
      h(
        'tbody',
        {},
        rows.map((c) =>
          h(
            'tr',
            {},
            h('td', { class: 'mono-cell', text: String(c.a ?? '') }),
            h('td', { class: 'mono-cell', text: String(c.b ?? '') }),
            h('td', { class: 'num', text: String(c.packets ?? 0) }),
            h('td', { class: 'num', text: String(c.bytes ?? 0) }),
            h('td', { text: Array.isArray(c.protocols) ? c.protocols.join(', ') : '' }),
          ),
        ),
      ),
    ),
  );
}

/** captureView renders metadata.capture, or returns null when it is not a capture summary. */
export function captureView(capture) {
  if (!capture || typeof capture !== 'object' || !Number.isFinite(Number(capture.packets))) return null;
  const packets = Number(capture.packets);
  const secs = Number(capture.duration_seconds) || 0;
  const head = `${packets} packet${packets === 1 ? '' : 's'}, ${Number(capture.bytes) || 0} bytes` + (secs ? ` over ${secs.toFixed(1)} s` : '') + (capture.link ? ` on ${capture.link}` : '');
  const section = h('section', { class: 'capture-card', 'aria-label': 'Packet capture summary' }, h('p', { class: 'capture-head', text: head }));
  if (packets > 0) {
    section.append(h('h4', { text: 'Protocols' }), chart(capture.protocols), h('h4', { text: 'Conversations' }), conversationTable(capture.conversations));
  } else {
    section.append(h('p', { class: 'muted capture-none', text: 'Nothing crossed the link while it was captured.' }));
  }
  return section;
}
