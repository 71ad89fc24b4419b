// GNS3's own AI panel with a thinking model (DeepSeek V4's wire, emulated), once per web UI build:
// launched by TestGNS3WebUIPanelThinkingInBrowser in web/. The panel reads only the chat API's
// event types, so it must show the answer alone, never a word of the reasoning, while it waits
// through the model's thinking, and the same from the history.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPanel, openSession, panelSettings, readBubbles, readToolCards, readSessions, sendAndWait, usePanel } from './webui.mjs';

const settings = panelSettings('TestGNS3WebUIPanelThinkingInBrowser');
const { URL, PROJECT, BUILD, ARTIFACTS, skip } = settings;
const panel = usePanel(settings);
const BEFORE = process.env.COPILOT_THOUGHT_BEFORE || '';
const AFTER = process.env.COPILOT_THOUGHT_AFTER || '';
const ANSWER = process.env.COPILOT_ANSWER || '';

describe(`GNS3 web UI ${BUILD}: the AI panel with a thinking model`, { skip }, () => {
  test('the panel shows the answer alone while the model thinks and calls a tool', async () => {
    await sendAndWait(panel.page, 'What is in my lab? Think first.');
    // The panel draws the tool-only first call as an assistant bubble of its own (it does the
    // same for a model that does not think), then the answer.
    const bubbles = await readBubbles(panel.page);
    assert.equal(bubbles[0].role, 'user', JSON.stringify(bubbles));
    assert.ok(bubbles.slice(1).every((b) => b.role === 'assistant' && !b.error && !b.streaming), JSON.stringify(bubbles));
    const answer = bubbles.at(-1);
    assert.equal(answer.text, ANSWER, 'the answer is shown, alone');
    const shown = bubbles.map((b) => b.text).join(' | ');
    for (const thought of [BEFORE, AFTER]) assert.ok(!shown.includes(thought.slice(0, 40)), `no reasoning in the panel: ${shown}`);
    const cards = await readToolCards(panel.page);
    assert.ok(cards.some((c) => /get_gns3_topology/.test(c.name)), JSON.stringify(cards));
    await panel.page.screenshot({ path: join(ARTIFACTS, `webui-${BUILD}-thinking-01-answer.png`) });
    assert.deepEqual(panel.browser.failures.filter((f) => /^(5\d\d|404|script error|failed)/.test(f)), []);
  });

  test('the history shows the answer alone too', async () => {
    await openPanel(panel.page, URL, PROJECT);
    const at = (await readSessions(panel.page)).findIndex((s) => /Thinking about the lab/.test(s.title));
    assert.ok(at >= 0, 'the session is listed with its title');
    await openSession(panel.page, at);
    const bubbles = await readBubbles(panel.page);
    const text = bubbles.map((b) => b.text).join(' | ');
    assert.ok(text.includes(ANSWER), text);
    for (const thought of [BEFORE, AFTER]) assert.ok(!text.includes(thought.slice(0, 40)), `no reasoning in the history: ${text}`);
    await panel.page.screenshot({ path: join(ARTIFACTS, `webui-${BUILD}-thinking-02-history.png`) });
  });
});
