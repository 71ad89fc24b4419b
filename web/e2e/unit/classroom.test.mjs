// Unit tests of the classroom pieces' pure parts: partial-success states, the capture chart's
// bars and the export file name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemState } from '../../static/toolcards.js';
import { protocolBars } from '../../static/capturecard.js';
import { fileNameFrom } from '../../static/exportmenu.js';

test('partial_success is a state of its own', () => {
  assert.equal(itemState('partial_success'), 'partial');
  assert.equal(itemState('PARTIAL'), 'partial');
  assert.equal(itemState('success'), 'ok');
  assert.equal(itemState('failed'), 'failed');
});

test('protocol bars are sorted, scaled to the largest and capped', () => {
  const bars = protocolBars(
    [
      { protocol: 'ARP', packets: 11 },
      { protocol: 'TCP', packets: 18 },
      { protocol: 'ICMPv6', packets: 2 },
      { protocol: 'none', packets: 0 },
      null,
    ],
    180,
  );
  assert.deepEqual(
    bars.map((b) => [b.protocol, b.packets, b.width]),
    [
      ['TCP', 18, 180],
      ['ARP', 11, 110],
      ['ICMPv6', 2, 20],
    ],
  );
  const many = protocolBars(Array.from({ length: 15 }, (_, i) => ({ protocol: 'P' + i, packets: 100 - i })));
  assert.equal(many.length, 13);
  assert.deepEqual([many[12].protocol, many[12].packets], ['3 more', 88 + 87 + 86]);
  assert.deepEqual(protocolBars(undefined), []);
});

test('the export file name comes from Content-Disposition', () => {
  assert.equal(fileNameFrom("attachment; filename*=utf-8''pc2-%C3%A9t%C3%A9.json"), 'pc2-été.json');
  assert.equal(fileNameFrom('attachment; filename="lab-chat.md"'), 'lab-chat.md');
  assert.equal(fileNameFrom('attachment; filename=lab.json'), 'lab.json');
  assert.equal(fileNameFrom(''), '');
});
