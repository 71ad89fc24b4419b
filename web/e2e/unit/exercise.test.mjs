// Unit tests of how the exercise banner words an exercise's state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeExercise } from '../../static/exercise.js';

test('an open exercise says a fault was injected, never which one, with its counts', () => {
  assert.equal(
    describeExercise({ status: 'open', checks: 1, hints_used: 0 }),
    'Troubleshooting exercise open: a fault was injected into this lab. 1 check, 0 hints used.',
  );
  assert.equal(describeExercise({ status: 'open', checks: 2, hints_used: 1 }), 'Troubleshooting exercise open: a fault was injected into this lab. 2 checks, 1 hint used.');
});

test('an exercise that ended reads as its end', () => {
  assert.equal(describeExercise({ status: 'fixed', checks: 3, hints_used: 2 }), 'Exercise fixed after 3 checks and 2 hints used. Well done!');
  assert.equal(describeExercise({ status: 'given_up', checks: 0, hints_used: 0 }), 'Exercise given up (0 checks, 0 hints used).');
  assert.equal(describeExercise({ status: 'expired', checks: 1, hints_used: 1 }), 'Exercise expired (1 check, 1 hint used).');
  assert.equal(describeExercise(null), '');
});
