// The chat page with a thinking model (DeepSeek V4's wire, emulated), in headless Chromium:
// launched by TestThinkingOnTheChatPageInBrowser in web/, which scripts a turn that reasons,
// calls a tool, reasons again and answers. The page must show that the model is thinking while
// it thinks, keep the reasoning folded away (open on click) and never in the answer, live and
// when the conversation is read back from the history.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, projectOption, signIn } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const PROJECT = process.env.COPILOT_PROJECT || 'lab1';
const BEFORE = process.env.COPILOT_THOUGHT_BEFORE || '';
const AFTER = process.env.COPILOT_THOUGHT_AFTER || '';
const ANSWER = process.env.COPILOT_ANSWER || '';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;

const skip = URL ? false : 'COPILOT_URL is not set: run these through `go test ./web -run TestThinkingOnTheChatPageInBrowser`, which starts the service';

let browser;
let page;
const pageErrors = [];

/** blocks reads the last answer's parts in order: each reasoning block (with its state, summary,
 * whether it is open and whether its text shows), each tool card and each text segment. */
const parts = () =>
  page.$$eval('.msg.assistant:last-of-type .msg-body > *', (els) =>
    els.map((e) => {
      if (e.matches('details.reasoning')) {
        const text = e.querySelector('.reasoning-text');
        return { kind: 'reasoning', state: e.dataset.state, summary: e.querySelector('summary').textContent, open: e.open,
          text: text.textContent, visible: text.checkVisibility() };
      }
      if (e.matches('.tool-card')) return { kind: 'tool', name: e.querySelector('.tool-name').textContent };
      if (e.matches('.md')) return { kind: 'text', text: e.textContent };
      return { kind: e.className || e.tagName };
    }),
  );

async function waitTurnDone(timeout = 60000) {
  await page.waitForSelector('#send:not([hidden])', { timeout });
  await page.waitForSelector('.msg.assistant.streaming', { state: 'detached', timeout });
}

describe('chat page with a thinking model', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launch();
    ({ page } = browser);
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await page.goto(URL + '/');
    await signIn(page, USER, PASSWORD);
    await projectOption(page, PROJECT);
    await page.waitForSelector('.empty-state');
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('the model is shown thinking while it thinks, its reasoning folded and never the answer', async () => {
    // Record what was on screen while the model thought: the reasoning block's summary and
    // whether any of its words ever reached the answer's text.
    await page.evaluate((before) => {
      window.__thinking = { summaries: [], leaked: false, textShown: false };
      new MutationObserver(() => {
        const msg = document.querySelector('.msg.assistant.streaming');
        if (!msg) return;
        const block = msg.querySelector('details.reasoning[data-state="thinking"]');
        if (block) {
          const s = block.querySelector('summary').textContent;
          if (window.__thinking.summaries.at(-1) !== s) window.__thinking.summaries.push(s);
          if (block.querySelector('.reasoning-text').checkVisibility()) window.__thinking.textShown = true;
        }
        for (const md of msg.querySelectorAll('.md')) if (md.textContent.includes(before.slice(0, 30))) window.__thinking.leaked = true;
      }).observe(document.getElementById('conversation'), { subtree: true, childList: true, characterData: true, attributes: true });
    }, BEFORE);

    await page.fill('#composer-input', 'What is in my lab? Think first.');
    await page.press('#composer-input', 'Enter');
    // While the model thinks: a block that says so, closed.
    await page.waitForSelector('.msg.assistant.streaming details.reasoning[data-state="thinking"]');
    const live = (await parts()).find((p) => p.kind === 'reasoning');
    assert.match(live.summary, /Thinking…/);
    assert.equal(live.open, false, 'folded while the model thinks');
    assert.equal(live.visible, false, 'its text is not shown until opened');
    await page.screenshot({ path: join(ARTIFACTS, 'thinking-01-live.png') });

    await waitTurnDone();
    const seen = await page.evaluate(() => window.__thinking);
    assert.ok(seen.summaries.includes('Thinking…'), JSON.stringify(seen));
    assert.equal(seen.leaked, false, 'no reasoning ever showed in the answer');
    assert.equal(seen.textShown, false, 'the reasoning stayed folded');

    const done = await parts();
    assert.deepEqual(done.map((p) => p.kind), ['reasoning', 'tool', 'reasoning', 'text'], JSON.stringify(done));
    const [first, tool, second, answer] = done;
    assert.equal(tool.name, 'get_gns3_topology');
    for (const [block, thought] of [[first, BEFORE], [second, AFTER]]) {
      assert.equal(block.state, 'done');
      assert.match(block.summary, /^Thought/);
      assert.equal(block.open, false);
      assert.equal(block.text.trim(), thought);
    }
    assert.equal(answer.text.trim(), ANSWER, 'the answer is the answer alone');

    // A click opens the reasoning; another folds it again.
    await page.click('.msg.assistant:last-of-type details.reasoning >> nth=0 >> summary');
    const opened = (await parts())[0];
    assert.equal(opened.open, true);
    assert.equal(opened.visible, true);
    await page.screenshot({ path: join(ARTIFACTS, 'thinking-02-opened.png') });
    await page.click('.msg.assistant:last-of-type details.reasoning >> nth=0 >> summary');
    assert.equal((await parts())[0].open, false);
  });

  test('the history shows the reasoning folded beside each answer, too', async () => {
    await page.reload();
    await page.waitForSelector('.msg.assistant .md');
    const read = await parts();
    assert.deepEqual(read.map((p) => p.kind), ['reasoning', 'tool', 'reasoning', 'text'], JSON.stringify(read));
    assert.equal(read[0].text.trim(), BEFORE);
    assert.equal(read[2].text.trim(), AFTER);
    for (const block of [read[0], read[2]]) {
      assert.equal(block.state, 'done');
      assert.equal(block.summary, 'Thought');
      assert.equal(block.open, false);
      assert.equal(block.visible, false);
    }
    assert.equal(read[3].text.trim(), ANSWER);
    // The session's statistics say how much of it was thinking.
    assert.match(await page.textContent('.session.active .session-stats'), /tokens, [1-9][\d.]*k? thinking/);
    await page.screenshot({ path: join(ARTIFACTS, 'thinking-03-history.png') });
    assert.deepEqual(pageErrors, []);
  });
});
