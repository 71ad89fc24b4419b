// Unit tests of the page's Markdown parser: the tree it builds is what the DOM renderer turns
// into elements, so raw HTML must come out as text nodes and unsafe links as plain text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, parseInline, safeHref } from '../../static/markdown.js';

const texts = (nodes) => nodes.map((n) => (n.type === 'text' ? n.text : n.children ? texts(n.children) : n.text || '')).join('');

test('raw HTML stays literal text', () => {
  const blocks = parse('Hello <script>alert(1)</script> and <img src=x onerror=alert(2)>');
  assert.equal(blocks.length, 1);
  assert.equal(blocks[0].type, 'paragraph');
  assert.deepEqual(blocks[0].children, [{ type: 'text', text: 'Hello <script>alert(1)</script> and <img src=x onerror=alert(2)>' }]);
});

test('a script block on its own line is a paragraph of text', () => {
  const blocks = parse('<script>\nwindow.pwned = 1\n</script>');
  assert.equal(blocks[0].type, 'paragraph');
  assert.equal(texts(blocks[0].children), '<script>\nwindow.pwned = 1\n</script>');
});

test('links: only http(s) and mailto become links', () => {
  assert.equal(safeHref('javascript:alert(1)'), null);
  assert.equal(safeHref(' JaVaScRiPt:alert(1)'), null);
  assert.equal(safeHref('data:text/html,<b>x</b>'), null);
  assert.equal(safeHref('vbscript:x'), null);
  assert.equal(safeHref('/relative'), null);
  assert.equal(safeHref('https://docs.gns3.com/'), 'https://docs.gns3.com/');
  assert.equal(safeHref('mailto:a@b.c'), 'mailto:a@b.c');
  const bad = parseInline('[click](javascript:alert(1))');
  assert.ok(bad.every((n) => n.type !== 'link'), JSON.stringify(bad));
  assert.equal(texts(bad), 'click');
  const good = parseInline('see [the docs](https://docs.gns3.com/docs/ "GNS3") now');
  assert.deepEqual(good[1], { type: 'link', href: 'https://docs.gns3.com/docs/', children: [{ type: 'text', text: 'the docs' }] });
});

test('inline emphasis, code and strikethrough', () => {
  const n = parseInline('**R1** is *up*, `show ip int brief` ~~down~~');
  assert.deepEqual(
    n.map((x) => x.type),
    ['strong', 'text', 'em', 'text', 'code', 'text', 'del'],
  );
  assert.equal(n[4].text, 'show ip int brief');
});

test('underscores inside words are not emphasis', () => {
  const n = parseInline('set ip_address and node_id here, but _this_ is');
  assert.equal(n.filter((x) => x.type === 'em').length, 1);
  assert.ok(texts(n).includes('ip_address and node_id'));
});

test('code spans keep their content verbatim', () => {
  const n = parseInline('run `<b>*not bold*</b>`');
  assert.deepEqual(n[1], { type: 'code', text: '<b>*not bold*</b>' });
});

test('fenced code blocks, closed or still streaming', () => {
  const closed = parse('```cisco\nR1# show run\n<html>\n```\nafter');
  assert.deepEqual(closed[0], { type: 'code', lang: 'cisco', text: 'R1# show run\n<html>' });
  assert.equal(closed[1].type, 'paragraph');
  const open = parse('text\n\n```\nline 1\nline 2');
  assert.deepEqual(open[1], { type: 'code', lang: '', text: 'line 1\nline 2' });
});

test('headings, rules, quotes', () => {
  const b = parse('## Topology\n---\n> note *this*');
  assert.deepEqual(b.map((x) => x.type), ['heading', 'hr', 'blockquote']);
  assert.equal(b[0].level, 2);
  assert.equal(b[2].children[0].type, 'paragraph');
});

test('lists: bullets, ordered with start, nested', () => {
  const b = parse('- PC1\n- PC2\n  - eth0\n- R1\n\n3. start\n4. check');
  assert.equal(b[0].type, 'list');
  assert.equal(b[0].ordered, false);
  assert.equal(b[0].items.length, 3);
  assert.equal(b[0].items[1][1].type, 'list', 'nested list inside the second item');
  assert.equal(b[1].type, 'list');
  assert.equal(b[1].ordered, true);
  assert.equal(b[1].start, 3);
  assert.equal(b[1].items.length, 2);
});

test('tables with alignment and ragged rows', () => {
  const b = parse('| Node | Status |\n|:-----|------:|\n| PC1 | started |\n| PC2 |\n\nafter');
  assert.equal(b[0].type, 'table');
  assert.deepEqual(b[0].align, ['left', 'right']);
  assert.equal(b[0].rows.length, 2);
  assert.equal(b[0].rows[1].length, 2, 'short rows are padded');
  assert.equal(b[1].type, 'paragraph');
});

test('hard line breaks and escapes', () => {
  const n = parseInline('a  \nb\\*c\\*');
  assert.deepEqual(n, [{ type: 'text', text: 'a' }, { type: 'br' }, { type: 'text', text: 'b*c*' }]);
});

test('bare URLs become links without trailing punctuation', () => {
  const n = parseInline('See https://gns3.com/docs.');
  assert.equal(n[1].type, 'link');
  assert.equal(n[1].href, 'https://gns3.com/docs');
  assert.equal(n[2].text, '.');
});

test('unbalanced delimiters are text', () => {
  for (const s of ['**bold', '*', '`code', '[x](', 'a ** b', '~~', '[', '<', '_']) {
    const n = parseInline(s);
    assert.equal(texts(n), s, s);
  }
});

test('parsing is fast enough to re-render while streaming', () => {
  const chunk = '## Node PC1\n\n- **status**: `started`, see https://x.example/a_b\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nshow ip\n```\n';
  const big = chunk.repeat(400); // ~50 KB
  const t0 = performance.now();
  parse(big);
  const ms = performance.now() - t0;
  assert.ok(ms < 500, `parse of ${big.length} bytes took ${ms.toFixed(0)} ms`);
});
