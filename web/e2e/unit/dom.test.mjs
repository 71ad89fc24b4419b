// Unit tests of how the page reads the times the API writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTime, relativeTime } from '../../static/dom.js';

// Not UTC, so a time without a zone read as local time would show up.
process.env.TZ = 'Asia/Shanghai';

const at = Date.UTC(2026, 2, 6, 16, 31, 36, 547);

test('times with +00:00, Z, or no zone at all (UTC) read as the same instant', () => {
  assert.equal(parseTime('2026-03-06T16:31:36.547762+00:00'), at);
  assert.equal(parseTime('2026-03-06T16:31:36.547Z'), at);
  assert.equal(parseTime('2026-03-06T16:31:36.547762'), at, 'naive UTC, as GNS3 own copilot writes it');
  assert.equal(parseTime('2026-03-06T18:31:36.547+02:00'), at);
});

test('what is not a time reads as none', () => {
  assert.ok(Number.isNaN(parseTime('')));
  assert.ok(Number.isNaN(parseTime(undefined)));
  assert.ok(Number.isNaN(parseTime('yesterday')));
  assert.equal(relativeTime('not a time', at), '');
});

test('the sidebar words a recent time relative to now', () => {
  assert.equal(relativeTime('2026-03-06T16:31:36.547762+00:00', at + 10_000), 'just now');
  assert.equal(relativeTime('2026-03-06T16:31:36.547762', at + 5 * 60_000), '5 min ago');
  assert.equal(relativeTime('2026-03-06T16:31:36+00:00', at + 3 * 3600_000), '3 h ago');
});
