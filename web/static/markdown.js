// A small Markdown renderer for model answers. parse() turns text into a plain tree (no DOM, so
// it is unit-tested in Node); render() builds DOM nodes from that tree with createElement and
// text nodes only. No HTML string is ever interpreted: raw HTML in the source stays literal text.
// It is tolerant of unfinished input because answers are rendered while they stream.

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*)|[ \t]*)$/;
const TABLE_SEP = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;

/** parse returns the block tree of a Markdown text. */
export function parse(src) {
  const lines = String(src ?? '').replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  return parseBlocks(lines);
}

function isBlank(line) {
  return /^\s*$/.test(line);
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function parseBlocks(lines) {
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length) {
        const close = lines[i].match(/^ {0,3}(`{3,}|~{3,})\s*$/);
        if (close && close[1][0] === fence[0] && close[1].length >= fence.length) {
          i++;
          break;
        }
        body.push(lines[i]);
        i++;
      }
      blocks.push({ type: 'code', lang: m[2] || '', text: body.join('\n') });
      continue;
    }
    if ((m = HEADING.exec(line))) {
      blocks.push({ type: 'heading', level: m[1].length, children: parseInline(m[2] || '') });
      i++;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ type: 'hr' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && !isBlank(lines[i])) {
        const q = QUOTE.exec(lines[i]);
        body.push(q ? q[1] : lines[i]);
        i++;
      }
      blocks.push({ type: 'blockquote', children: parseBlocks(body) });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = parseList(lines, i, blocks);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      const header = splitRow(line);
      const align = splitRow(lines[i + 1]).map((c) => {
        const l = c.startsWith(':');
        const r = c.endsWith(':');
        return l && r ? 'center' : r ? 'right' : l ? 'left' : '';
      });
      if (align.length === header.length) {
        i += 2;
        const rows = [];
        while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) {
          rows.push(splitRow(lines[i]));
          i++;
        }
        const width = header.length;
        blocks.push({
          type: 'table',
          align: align.slice(0, width),
          header: header.map(parseInline),
          rows: rows.map((r) => {
            const cells = r.slice(0, width);
            while (cells.length < width) cells.push('');
            return cells.map(parseInline);
          }),
        });
        continue;
      }
    }
    const para = [];
    while (i < lines.length && !isBlank(lines[i]) && (para.length === 0 || !startsBlock(lines[i]))) {
      para.push(lines[i]);
      i++;
    }
    blocks.push({ type: 'paragraph', children: parseInline(para.map((l) => l.replace(/^ +/, '')).join('\n')) });
  }
  return blocks;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  for (let k = 0; k < s.length; k++) {
    if (s[k] === '\\' && s[k + 1] === '|') {
      cur += '|';
      k++;
    } else if (s[k] === '|') {
      cells.push(cur.trim());
      cur = '';
    } else {
      cur += s[k];
    }
  }
  cells.push(cur.trim());
  return cells;
}

function parseList(lines, i, blocks) {
  const first = LIST_ITEM.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const start = ordered ? parseInt(first[2], 10) : 1;
  const items = [];
  let loose = false;
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = indent + m[2].length + 1;
    const body = [m[3] || ''];
    i++;
    let sawBlank = false;
    while (i < lines.length) {
      const l = lines[i];
      if (isBlank(l)) {
        sawBlank = true;
        body.push('');
        i++;
        continue;
      }
      const lead = l.match(/^ */)[0].length;
      if (lead >= Math.min(contentIndent, indent + 2)) {
        body.push(l.slice(Math.min(lead, contentIndent)));
        sawBlank = false;
        i++;
        continue;
      }
      // A lazy continuation line belongs to the item's paragraph.
      if (!sawBlank && !startsBlock(l)) {
        body.push(l);
        i++;
        continue;
      }
      break;
    }
    while (body.length && isBlank(body[body.length - 1])) body.pop();
    if (body.slice(1).some(isBlank)) loose = true;
    items.push(parseBlocks(body));
    // A blank line between items makes the list loose; stop at the first non-item after it.
    let j = i;
    while (j < lines.length && isBlank(lines[j])) j++;
    if (j < lines.length && j > i) {
      const next = LIST_ITEM.exec(lines[j]);
      if (next && next[1].length === indent && /\d/.test(next[2]) === ordered) {
        loose = true;
        i = j;
      }
    }
  }
  blocks.push({ type: 'list', ordered, start, loose, items });
  return i;
}

// Inline syntax ---------------------------------------------------------------------------------

const PUNCT_ESCAPABLE = '\\`*_{}[]()#+-.!|~<>"\'';

/** parseInline returns the inline tree of one paragraph's text. */
export function parseInline(text) {
  const out = [];
  let buf = '';
  const flush = () => {
    if (buf) {
      out.push({ type: 'text', text: buf });
      buf = '';
    }
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      if (text[i + 1] === '\n') {
        flush();
        out.push({ type: 'br' });
        i += 2;
        continue;
      }
      if (PUNCT_ESCAPABLE.includes(text[i + 1])) {
        buf += text[i + 1];
        i += 2;
        continue;
      }
    }
    if (c === '\n') {
      if (/ {2,}$/.test(buf)) {
        buf = buf.replace(/ +$/, '');
        flush();
        out.push({ type: 'br' });
      } else {
        buf += '\n';
      }
      i++;
      continue;
    }
    if (c === '`') {
      const run = text.slice(i).match(/^`+/)[0];
      const end = text.indexOf(run, i + run.length);
      if (end !== -1) {
        flush();
        let code = text.slice(i + run.length, end).replace(/\n/g, ' ');
        if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1);
        out.push({ type: 'code', text: code });
        i = end + run.length;
        continue;
      }
      buf += run;
      i += run.length;
      continue;
    }
    if (c === '[') {
      const link = matchLink(text, i);
      if (link) {
        flush();
        const href = safeHref(link.href);
        if (href) {
          out.push({ type: 'link', href, children: parseInline(link.label) });
        } else {
          out.push(...parseInline(link.label));
        }
        i = link.end;
        continue;
      }
    }
    if (c === '<') {
      const m = text.slice(i).match(/^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i);
      if (m) {
        flush();
        out.push({ type: 'link', href: m[1], children: [{ type: 'text', text: m[1] }] });
        i += m[0].length;
        continue;
      }
    }
    if (c === 'h' && (i === 0 || /[\s(]/.test(text[i - 1]))) {
      const m = text.slice(i).match(/^https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"*_~]/);
      if (m) {
        flush();
        out.push({ type: 'link', href: m[0], children: [{ type: 'text', text: m[0] }] });
        i += m[0].length;
        continue;
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      const em = matchEmphasis(text, i);
      if (em) {
        flush();
        out.push({ type: em.type, children: parseInline(em.inner) });
        i = em.end;
        continue;
      }
      const run = text.slice(i).match(/^[*_~]+/)[0];
      buf += run;
      i += run.length;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

function matchLink(text, i) {
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    if (text[j] === '\\') {
      j++;
      continue;
    }
    if (text[j] === '[') depth++;
    if (text[j] === ']') {
      depth--;
      if (depth === 0) break;
    }
  }
  if (j >= text.length || text[j + 1] !== '(') return null;
  const m = text.slice(j + 1).match(/^\(\s*<?([^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/);
  if (!m) return null;
  return { label: text.slice(i + 1, j), href: m[1], end: j + 1 + m[0].length };
}

/** safeHref returns the URL when it is an absolute http(s) or mailto link, else null. */
export function safeHref(href) {
  const h = String(href || '').trim();
  if (/^https?:\/\/[^\s]+$/i.test(h) || /^mailto:[^\s]+$/i.test(h)) return h;
  return null;
}

function matchEmphasis(text, i) {
  const candidates = text[i] === '~' ? [['~~', 'del']] : [[text[i].repeat(2), 'strong'], [text[i], 'em']];
  for (const [delim, type] of candidates) {
    if (!text.startsWith(delim, i)) continue;
    const after = text[i + delim.length];
    if (after === undefined || /\s/.test(after)) continue;
    const before = i > 0 ? text[i - 1] : '';
    // Underscores inside words (ip_address, Gi0_0) are not emphasis.
    if (delim[0] === '_' && /[\p{L}\p{N}]/u.test(before)) continue;
    let k = i + delim.length;
    while (k < text.length) {
      if (text[k] === '\\') {
        k += 2;
        continue;
      }
      if (text[k] === '`') {
        const run = text.slice(k).match(/^`+/)[0];
        const close = text.indexOf(run, k + run.length);
        k = close === -1 ? k + run.length : close + run.length;
        continue;
      }
      if (text.startsWith(delim, k) && !/\s/.test(text[k - 1]) && k > i + delim.length) {
        const next = text[k + delim.length];
        // Single delimiters must not be the start of a double one (**a* b**).
        if (delim.length === 1 && next === delim) {
          k += 2;
          continue;
        }
        if (delim[0] === '_' && next !== undefined && /[\p{L}\p{N}]/u.test(next)) {
          k++;
          continue;
        }
        return { type, inner: text.slice(i + delim.length, k), end: k + delim.length };
      }
      k++;
    }
  }
  return null;
}

// DOM -------------------------------------------------------------------------------------------

/** render builds a DocumentFragment for the Markdown text, using only DOM APIs and text nodes. */
export function render(src, doc = globalThis.document) {
  const frag = doc.createDocumentFragment();
  for (const b of parse(src)) frag.append(renderBlock(b, doc));
  return frag;
}

function renderBlock(b, doc) {
  const el = (tag) => doc.createElement(tag);
  switch (b.type) {
    case 'heading': {
      // Model headings sit inside a chat message: shift them below the page's own headings.
      const h = el('h' + Math.min(6, b.level + 2));
      appendInline(h, b.children, doc);
      return h;
    }
    case 'paragraph': {
      const p = el('p');
      appendInline(p, b.children, doc);
      return p;
    }
    case 'code': {
      const pre = el('pre');
      const code = el('code');
      if (/^[\w+-]{1,30}$/.test(b.lang)) code.dataset.lang = b.lang;
      code.textContent = b.text;
      pre.append(code);
      return pre;
    }
    case 'hr':
      return el('hr');
    case 'blockquote': {
      const q = el('blockquote');
      for (const c of b.children) q.append(renderBlock(c, doc));
      return q;
    }
    case 'list': {
      const list = el(b.ordered ? 'ol' : 'ul');
      if (b.ordered && b.start !== 1) list.setAttribute('start', String(b.start));
      for (const item of b.items) {
        const li = el('li');
        for (const c of item) {
          if (!b.loose && c.type === 'paragraph') appendInline(li, c.children, doc);
          else li.append(renderBlock(c, doc));
        }
        list.append(li);
      }
      return list;
    }
    case 'table': {
      const wrap = el('div');
      wrap.className = 'table-wrap';
      const table = el('table');
      const thead = el('thead');
      const hr = el('tr');
      b.header.forEach((cell, k) => {
        const th = el('th');
        th.setAttribute('scope', 'col');
        if (b.align[k]) th.className = 'align-' + b.align[k];
        appendInline(th, cell, doc);
        hr.append(th);
      });
      thead.append(hr);
      const tbody = el('tbody');
      for (const row of b.rows) {
        const tr = el('tr');
        row.forEach((cell, k) => {
          const td = el('td');
          if (b.align[k]) td.className = 'align-' + b.align[k];
          appendInline(td, cell, doc);
          tr.append(td);
        });
        tbody.append(tr);
      }
      table.append(thead, tbody);
      wrap.append(table);
      return wrap;
    }
    default:
      return doc.createTextNode('');
  }
}

function appendInline(parent, nodes, doc) {
  for (const n of nodes) {
    switch (n.type) {
      case 'text':
        parent.append(doc.createTextNode(n.text));
        break;
      case 'br':
        parent.append(doc.createElement('br'));
        break;
      case 'code': {
        const c = doc.createElement('code');
        c.textContent = n.text;
        parent.append(c);
        break;
      }
      case 'link': {
        const href = safeHref(n.href);
        if (!href) {
          appendInline(parent, n.children, doc);
          break;
        }
        const a = doc.createElement('a');
        a.href = href;
        a.target = '_blank';
        a.rel = 'noopener noreferrer';
        appendInline(a, n.children, doc);
        parent.append(a);
        break;
      }
      case 'strong':
      case 'em':
      case 'del': {
        const e = doc.createElement(n.type);
        appendInline(e, n.children, doc);
        parent.append(e);
        break;
      }
      default:
        break;
    }
  }
}
