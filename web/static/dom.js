// h() builds elements from a tag, properties and children. Strings always become text nodes and
// attributes are set one by one, so nothing passed here is ever parsed as HTML.

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** svg builds an SVG element: attributes set one by one (undefined and null left out), children appended. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) if (c) el.append(c);
  return el;
}

/** clear removes every child of el. */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
}

/** formatCount writes 12345 as "12.3k" for the sidebar's statistics. */
export function formatCount(n) {
  n = Number(n) || 0;
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1000).toFixed(n < 10000 ? 1 : 0).replace(/\.0$/, '') + 'k';
  return (n / 1e6).toFixed(1).replace(/\.0$/, '') + 'M';
}

/**
 * parseTime reads an ISO 8601 time into milliseconds (NaN when it is none). The copilot writes
 * "+00:00"; a date-time without a zone is UTC, as GNS3's own copilot writes it, not local time.
 */
export function parseTime(iso) {
  if (typeof iso !== 'string' || iso === '') return NaN;
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(iso) || !iso.includes('T');
  return Date.parse(zoned ? iso : iso + 'Z');
}

/** relativeTime writes an ISO time as "just now", "5 min ago", "yesterday" or a date. */
export function relativeTime(iso, now = Date.now()) {
  const t = parseTime(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 86400) return Math.round(s / 3600) + ' h ago';
  if (s < 172800) return 'yesterday';
  return new Date(t).toLocaleDateString();
}
