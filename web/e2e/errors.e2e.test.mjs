// Browser tests of the errors a person must understand: no LLM configured (with the way to
// the settings form) and a GNS3 server that cannot be reached. The Go launcher
// (TestChatPageErrorsInBrowser in web/browser_test.go) starts the service without a default
// LLM and gives a control URL that takes the fake GNS3 server down.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSignedIn } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const CONTROL = process.env.COPILOT_CONTROL_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;

const skip = URL && CONTROL ? false : 'COPILOT_URL/COPILOT_CONTROL_URL are not set: run these through `go test ./web -run TestChatPageErrorsInBrowser`';

let browser;
let page;
const pageErrors = [];

describe('chat page errors', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await openSignedIn(URL, USER, PASSWORD, pageErrors);
    page = browser.page;
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('no LLM configured: the message is kept and the settings are one click away', async () => {
    await page.fill('#composer-input', 'hello copilot');
    await page.press('#composer-input', 'Enter');
    const notice = page.locator('.conversation .notice-error');
    await notice.waitFor();
    assert.match(await notice.textContent(), /No LLM is configured/);
    assert.equal(await page.inputValue('#composer-input'), 'hello copilot', 'the unsent message is given back');
    assert.equal(await page.locator('.conversation .msg').count(), 0, 'nothing pretends to have been sent');
    await page.screenshot({ path: join(ARTIFACTS, '17-no-llm-configured.png') });
    await notice.getByRole('link', { name: 'Open LLM settings' }).click();
    await page.waitForSelector('#view-settings:not([hidden])');
    assert.equal(await page.isVisible('#llm-form'), true);
    await page.click('.settings-head a');
    await page.waitForSelector('#chat:not([hidden])');
  });

  test('GNS3 unreachable: said plainly, with a way to try again', async () => {
    const res = await fetch(CONTROL + '/gns3/down', { method: 'POST' });
    assert.equal(res.status, 204);
    await page.fill('#composer-input', 'hello again');
    await page.press('#composer-input', 'Enter');
    const notice = page.locator('.conversation .notice-error', { hasText: 'GNS3' });
    await notice.waitFor();
    assert.match(await notice.textContent(), /GNS3 server cannot be reached/);
    assert.equal(await notice.getByRole('button', { name: 'Try again' }).count(), 1);
    await page.screenshot({ path: join(ARTIFACTS, '18-gns3-unreachable.png') });
  });

  test('no script errors happened', () => {
    assert.deepEqual(pageErrors, []);
  });
});
