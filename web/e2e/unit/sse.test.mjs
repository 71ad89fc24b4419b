// Unit tests of the fetch()-based SSE parser against the HTML standard's parsing rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SSEParser, readEvents } from '../../static/sse.js';

function collect(chunks) {
  const out = [];
  const p = new SSEParser((e) => out.push(e));
  for (const c of chunks) p.push(c);
  return out;
}

test('frames with id, event and JSON data', () => {
  const ev = collect(['id: 1-0\nevent: content\ndata: {"type":"content","content":"Hi"}\n\n']);
  assert.deepEqual(ev, [{ id: '1-0', event: 'content', data: '{"type":"content","content":"Hi"}' }]);
});

test('split anywhere, including inside a CRLF', () => {
  const whole = 'id: 7\r\nevent: done\r\ndata: {"a":1}\r\n\r\nid: 8\r\ndata: x\r\n\r\n';
  for (let cut = 1; cut < whole.length; cut++) {
    const ev = collect([whole.slice(0, cut), whole.slice(cut)]);
    assert.deepEqual(ev, [
      { id: '7', event: 'done', data: '{"a":1}' },
      { id: '8', event: 'message', data: 'x' },
    ], `cut at ${cut}`);
  }
});

test('bare CR line endings, comments, multi-line data, no space after colon', () => {
  const ev = collect([': keep-alive\r\rdata:line1\rdata: line2\r\r']);
  assert.deepEqual(ev, [{ id: '', event: 'message', data: 'line1\nline2' }]);
});

test('the last event id persists across events and an event without data is not dispatched', () => {
  const ev = collect(['id: 5\nevent: x\n\ndata: a\n\nid\ndata: b\n\n']);
  assert.deepEqual(ev, [
    { id: '5', event: 'message', data: 'a' },
    { id: '', event: 'message', data: 'b' },
  ]);
});

test('an unterminated event at the end is not dispatched', () => {
  assert.deepEqual(collect(['data: partial']), []);
});

test('readEvents decodes UTF-8 split across chunks', async () => {
  const bytes = new TextEncoder().encode('data: {"content":"ça marche ✓"}\n\n');
  const body = new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += 3) c.enqueue(bytes.slice(i, i + 3));
      c.close();
    },
  });
  const out = [];
  await readEvents(new Response(body), (e) => out.push(JSON.parse(e.data).content));
  assert.deepEqual(out, ['ça marche ✓']);
});
