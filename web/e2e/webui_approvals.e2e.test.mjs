// GNS3's real AI panel (both builds) and a configuration that needs approval: the panel knows
// no approval cards, so the question must arrive as text and the stream must end, and the
// user's next message must be the decision. Launched by TestGNS3WebUIPanelApprovalsInBrowser in
// web/, with a lab automation copilot (--approval changes) in front of the fake GNS3 and one
// real VPCS named PC1.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPanel, openSession, readBubbles, readSessions, sendAndWait, panelSettings, usePanel } from './webui.mjs';

const settings = panelSettings('TestGNS3WebUIPanelApprovalsInBrowser');
const { URL, PROJECT, BUILD, ARTIFACTS, skip } = settings;
const panel = usePanel(settings);

// newChat opens the map again with the panel on it, which starts with an empty conversation.
async function newChat() {
  await openPanel(panel.page, URL, PROJECT);
  assert.deepEqual(await readBubbles(panel.page), [], 'a fresh panel shows an empty conversation');
}

// ask sends text, waits until the panel lets its user type again (the stream ended), and
// returns the bubbles and the answer: the text of the assistant bubbles after the last user one.
async function ask(text) {
  await sendAndWait(panel.page, text, 60000);
  const bubbles = await readBubbles(panel.page);
  const from = bubbles.map((b) => b.role).lastIndexOf('user');
  const replies = bubbles.slice(from + 1);
  assert.ok(replies.length > 0 && replies.every((b) => b.role === 'assistant' && !b.streaming && !b.error), JSON.stringify(bubbles));
  return { bubbles, answer: { text: replies.map((b) => b.text).join(' ') } };
}

describe(`GNS3 web UI ${BUILD}: approvals in the AI panel`, { skip }, () => {
  test('the plan is asked in the conversation, and "approve" configures PC1', async () => {
    const { answer: question } = await ask("Set PC1's address to 10.9.0.1/24");
    assert.match(question.text, /Approval needed/);
    assert.match(question.text, /ip 10\.9\.0\.1\/24/);
    assert.match(question.text, /approve all/);
    await panel.page.screenshot({ path: join(ARTIFACTS, `webui-${BUILD}-approval-question.png`) });
    const { answer } = await ask('approve');
    assert.match(answer.text, /Approved/);
    assert.match(answer.text, /Done: PC1 is configured/);
    await panel.page.screenshot({ path: join(ARTIFACTS, `webui-${BUILD}-approval-done.png`) });

    // A reload shows the question, the answer and the outcome, in order.
    await openPanel(panel.page, URL, PROJECT);
    await openSession(panel.page, 0);
    const bubbles = await readBubbles(panel.page);
    const q = bubbles.findIndex((b) => b.role === 'assistant' && /Approval needed/.test(b.text));
    const a = bubbles.findIndex((b, i) => i > q && b.role === 'user' && /^approve/.test(b.text));
    const done = bubbles.findIndex((b, i) => i > a && b.role === 'assistant' && /Done: PC1 is configured/.test(b.text));
    assert.ok(q >= 0 && a > q && done > a, JSON.stringify(bubbles));
  });

  test('a rejection with a comment gets a corrected plan, which asks again', async () => {
    await newChat();
    const { answer: first } = await ask('Give PC1 the address 10.9.0.5/24');
    assert.match(first.text, /ip 10\.9\.0\.5\/24/);
    const { answer: second } = await ask('no, use 10.9.0.6/24 instead');
    assert.match(second.text, /Rejected/);
    assert.match(second.text, /ip 10\.9\.0\.6\/24/, 'the corrected plan');
    assert.match(second.text, /Approval needed/);
    const { answer } = await ask('yes');
    assert.match(answer.text, /Done: PC1 is configured/);
  });

  test('"approve all" approves both changes of one answer', async () => {
    await newChat();
    const { answer: first } = await ask('Put PC1 on 10.9.1.1/24 and then name it web1');
    assert.match(first.text, /ip 10\.9\.1\.1\/24/);
    const { bubbles, answer } = await ask('approve all');
    assert.match(answer.text, /Done: PC1 is configured/);
    const asked = bubbles.filter((b) => b.role === 'assistant' && /Approval needed/.test(b.text));
    assert.equal(asked.length, 1, 'asked once: ' + JSON.stringify(bubbles));
    const sessions = await readSessions(panel.page);
    for (const s of sessions) assert.doesNotMatch(s.time, /Invalid Date/);
    assert.deepEqual(panel.browser.failures.filter((f) => f.startsWith('script error')), []);
  });
});
