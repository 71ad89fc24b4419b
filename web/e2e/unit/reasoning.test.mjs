// Unit tests of how the page tells how long a model thought.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventTime, thoughtLabel } from '../../static/reasoning.js';

test('an event id tells when the event was logged', () => {
  assert.equal(eventTime('1700000000123-4'), 1700000000123);
  assert.ok(Number.isNaN(eventTime('')));
  assert.ok(Number.isNaN(eventTime(undefined)));
  assert.ok(Number.isNaN(eventTime('42')));
  assert.ok(Number.isNaN(eventTime('abc-1')));
});

test('how long the model thought, in words', () => {
  assert.equal(thoughtLabel(NaN), 'Thought');
  assert.equal(thoughtLabel(-5), 'Thought');
  assert.equal(thoughtLabel(300), 'Thought for a moment');
  assert.equal(thoughtLabel(12_400), 'Thought for 12 s');
  assert.equal(thoughtLabel(180_000), 'Thought for 3 min');
  assert.equal(thoughtLabel(185_000), 'Thought for 3 min 5 s');
});
