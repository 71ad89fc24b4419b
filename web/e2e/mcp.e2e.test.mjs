// Browser test of the project's pending approvals (web/static/approvals.js) asked by an MCP
// agent outside any chat; launched by TestMCPApprovalOnChatPage in web/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSignedIn } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;
const skip = URL ? false : 'COPILOT_URL is not set: run these through `go test ./web -run TestMCPApprovalOnChatPage`';

let browser;
let page;
const pageErrors = [];

describe('pending approvals of MCP agents', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await openSignedIn(URL, USER, PASSWORD, pageErrors);
    page = browser.page;
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test("an agent's configuration call waits on the chat page and is approved there", async () => {
    const card = '#pending-approvals .approval-card[data-status="pending"]';
    await page.waitForSelector(card, { timeout: 60000 });
    const text = await page.textContent(card);
    assert.match(text, /PC1/);
    assert.match(text, /ip 10\.6\.0\.1\/24/);
    assert.match(await page.textContent('#pending-approvals'), /Waiting for your approval elsewhere/);
    await page.screenshot({ path: join(ARTIFACTS, 'mcp-01-pending.png') });

    await page.click(card + ' button.approve');
    await page.waitForSelector('#pending-approvals .approval-card[data-status="approved"]', { timeout: 30000 });
    // No longer pending: the panel empties and hides at its next look.
    await page.waitForSelector('#pending-approvals', { state: 'hidden', timeout: 30000 });
    assert.deepEqual(pageErrors, []);
  });
});
