// Browser test of signing in with a GNS3 API key (GNS3 3.1's "gns3_…" keys): a revoked key is
// explained, a valid one signs in. Launched by TestSignInWithAPIKeyInBrowser in web/, which
// issues the keys on the fake GNS3.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const KEY = process.env.COPILOT_API_KEY;
const REVOKED = process.env.COPILOT_REVOKED_API_KEY;
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;
const skip = URL && KEY && REVOKED ? false : 'COPILOT_URL/COPILOT_API_KEY are not set: run these through `go test ./web -run TestSignInWithAPIKeyInBrowser`';

let browser;
let page;
const pageErrors = [];

describe('sign-in with a GNS3 API key', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launch();
    page = browser.page;
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await page.goto(URL);
    await page.waitForSelector('#signin-form');
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('a revoked key is explained; a valid one signs in', async () => {
    await page.click('#signin-key-box summary');
    await page.fill('#signin-apikey', REVOKED);
    await page.click('#signin-submit');
    await page.waitForSelector('#signin-error:not([hidden])');
    assert.match(await page.textContent('#signin-error'), /does not accept this API key/);
    await page.screenshot({ path: join(ARTIFACTS, 'signin-apikey-refused.png') });

    await page.fill('#signin-apikey', KEY);
    await page.click('#signin-submit');
    await page.waitForSelector('#view-app:not([hidden])');
    assert.equal((await page.textContent('#user-name')).trim(), 'alice');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('gns3copilot.token')), KEY);
    assert.deepEqual(pageErrors, []);
  });
});
