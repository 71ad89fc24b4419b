// Unit tests of how an approval card words an approval's plan and state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeStatus, planLines } from '../../static/approvals.js';

test('a decided approval reads as its record', () => {
  assert.equal(describeStatus({ status: 'approved', decided_by: 'alice', comment: 'go' }), 'Approved by alice: go');
  assert.equal(describeStatus({ status: 'rejected', decided_by: 'alice' }), 'Rejected by alice');
  assert.equal(describeStatus({ status: 'expired' }), 'Expired without an answer: nothing was done');
  assert.match(describeStatus({ status: 'pending' }), /^Waiting for your decision/);
});

test('plan lines carry the safety verdict per device', () => {
  const plan = {
    devices: [
      { name: 'R1', lines: [{ command: 'hostname R9', verdict: 'change' }, { command: 'reload', verdict: 'blocked', reason: 'reloads the device' }] },
      { name: 'PC1', lines: [{ command: 'ping 10.0.0.2', verdict: 'read' }] },
    ],
  };
  assert.deepEqual(planLines(plan), ['R1: + hostname R9', 'R1: ✗ reload — reloads the device', 'PC1: · ping 10.0.0.2']);
  assert.deepEqual(planLines({}), []);
});
