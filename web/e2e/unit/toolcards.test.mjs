// Unit tests of how tool results in the standard format are read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemState, parseToolOutput } from '../../static/toolcards.js';

test('standard format is recognised from its JSON string', () => {
  const out = JSON.stringify({ success: false, total: 3, successful: 2, failed: 1, data: [], metadata: { tool_name: 't' } });
  const p = parseToolOutput(out);
  assert.equal(p.standard, true);
  assert.equal(p.value.failed, 1);
});

test('non-JSON and non-standard outputs are shown raw', () => {
  assert.deepEqual(parseToolOutput('plain <b>text</b>'), { standard: false, value: null, raw: 'plain <b>text</b>' });
  assert.equal(parseToolOutput('[1,2]').standard, false);
  assert.equal(parseToolOutput('null').standard, false);
});

test('item states map to ✓, ✗ and ?', () => {
  assert.equal(itemState('success'), 'ok');
  assert.equal(itemState('FAILED'), 'failed');
  assert.equal(itemState('error'), 'failed');
  assert.equal(itemState(undefined), 'unknown');
  assert.equal(itemState('pending'), 'unknown');
});
