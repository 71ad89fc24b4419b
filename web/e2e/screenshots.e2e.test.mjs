// The README's pictures of the page (docs/images), taken by TestScreenshots in web/ through
// `make screenshots`: the lab picture with a configuration waiting for approval, and the same
// after approving it, with the diff of what changed.

import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { openSignedIn, send, waitTurnDone } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const OUT = process.env.COPILOT_SCREENSHOTS;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const skip = URL && OUT ? false : 'COPILOT_URL or COPILOT_SCREENSHOTS is not set: run `make screenshots`';

let browser;
let page;

describe('README screenshots', { skip }, () => {
  before(async () => {
    browser = await openSignedIn(URL, USER, PASSWORD, []);
    page = browser.page;
    await page.setViewportSize({ width: 1400, height: 860 });
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('the lab picture beside an approval card, then the approved change', async () => {
    await page.waitForSelector('#topology:not([hidden])', { timeout: 30000 });
    await page.waitForFunction(() => document.querySelectorAll('#topology .topo-node').length === 3, undefined, { timeout: 60000 });
    await send(page, 'Please address PC1 as 10.5.0.1/24 and name it web1');
    const card = '.approval-card[data-status="pending"]';
    await page.waitForSelector(card, { timeout: 30000 });
    await page.screenshot({ path: join(OUT, 'page-approval.png') });

    await page.click(card + ' button.approve');
    await page.waitForSelector('.approval-card[data-status="approved"]', { timeout: 30000 });
    await waitTurnDone(page);
    await page.screenshot({ path: join(OUT, 'page-approved.png') });
  });
});
