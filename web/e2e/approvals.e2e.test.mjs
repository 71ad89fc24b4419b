// Browser tests of the approval card (web/static/approvals.js) against the real service, a real
// VPCS PC and the scripted model; launched by TestApprovalCardInBrowser in web/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSignedIn, send, waitTurnDone } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;
const skip = URL ? false : 'COPILOT_URL is not set: run these through `go test ./web -run TestApprovalCardInBrowser`';

let browser;
let page;
const pageErrors = [];

describe('approval card', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await openSignedIn(URL, USER, PASSWORD, pageErrors);
    page = browser.page;
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('a configuration job shows its plan and waits; a reload shows it again; approving applies it and shows the diff', async () => {
    await send(page, 'address PC1 please');
    const card = '.approval-card[data-status="pending"]';
    await page.waitForSelector(card, { timeout: 30000 });
    const text = await page.textContent(card);
    assert.match(text, /PC1/);
    assert.match(text, /ip 10\.5\.0\.1\/24/);
    assert.match(text, /set pcname web1/);
    assert.match(text, /Current configuration \(show ip\)/);
    assert.match(await page.textContent(card + ' .approval-current pre'), /IP\/MASK/, 'the configuration read before asking');
    await page.screenshot({ path: join(ARTIFACTS, 'approval-01-pending.png') });

    await page.reload();
    await page.waitForSelector(card, { timeout: 20000 });
    assert.equal(await page.$$eval('.approval-card', (els) => els.length), 1, 'the pending card is shown once after a reload');

    await page.fill(card + ' .approval-comment', 'go ahead');
    await page.click(card + ' button.approve');
    await page.waitForSelector('.approval-card[data-status="approved"]');
    assert.match(await page.textContent('.approval-card .approval-status'), /Approved by alice: go ahead/);
    assert.equal(await page.isVisible('.approval-card .approval-actions'), false, 'a decided card is a record, without buttons');
    await waitTurnDone(page);
    const result = await page.textContent('.tool-card[data-tool-call-id="call_addr"]');
    assert.match(result, /\+ IP\/MASK : 10\.5\.0\.1\/24/, 'the diff of what really changed');
    assert.match(result, /\+ NAME : web1/);
    await page.screenshot({ path: join(ARTIFACTS, 'approval-02-approved.png') });
  });

  test('a destructive tool asks too; rejecting it with a comment keeps the node', async () => {
    await send(page, 'now delete PC2');
    const card = '.approval-card[data-status="pending"]';
    await page.waitForSelector(card, { timeout: 30000 });
    assert.match(await page.textContent(card), /Delete PC2 and its 0 link\(s\); this cannot be undone/, "the card names what the delete removes");
    await page.fill(card + ' .approval-comment', 'PC2 stays');
    await page.click(card + ' button.reject');
    await page.waitForSelector('.approval-card[data-status="rejected"]');
    await waitTurnDone(page);
    assert.match(await page.textContent('.tool-card[data-tool-call-id="call_del"]'), /PC2 stays/, 'the model got the comment as the result');
  });

  test('after a reload the decided cards stay as records of the conversation', async () => {
    await page.reload();
    await page.waitForSelector('.approval-card[data-status="rejected"]', { timeout: 20000 });
    const states = await page.$$eval('.approval-card', (els) => els.map((e) => e.dataset.status));
    assert.deepEqual(states, ['approved', 'rejected']);
    assert.deepEqual(pageErrors, []);
  });
});
