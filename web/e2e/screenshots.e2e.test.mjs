// The README's pictures of the page (docs/images), taken by TestScreenshots in web/ through
// `make screenshots`: the lab picture with a configuration waiting for approval, and the same
// after approving it, with the diff of what changed.

import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launch, openSignedIn, send, waitTurnDone } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const OUT = process.env.COPILOT_SCREENSHOTS;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const WEBUI = process.env.COPILOT_WEBUI === '1';
const PROJECT_ID = process.env.COPILOT_PROJECT_ID;
const skip = URL && OUT ? false : 'COPILOT_URL or COPILOT_SCREENSHOTS is not set: run `make screenshots`';

let browser;
let page;

describe('README screenshots of the copilot page', { skip: skip || (WEBUI && 'the GNS3 web UI run') }, () => {
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

// GNS3's own web UI (served by the fake GNS3 behind --proxy-gns3), its AI chat panel open on the
// project after one answer. Selectors: /work/shared/gns3-web-ui/README.md.
describe('README screenshot of GNS3 web UI panel', { skip: skip || (!WEBUI && 'not the GNS3 web UI run') }, () => {
  test('the panel answers on the project map', async () => {
    const b = await launch();
    const p = b.page;
    // What GNS3's UI asked and did not get says why a page stays empty.
    const refused = [];
    p.on('response', (r) => { if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${new globalThis.URL(r.url()).pathname}`); });
    try {
      await p.setViewportSize({ width: 1400, height: 860 });
      await p.addInitScript(() => localStorage.setItem('statistics_command', 'false'));
      await p.goto(URL + '/static/web-ui/bundled');
      await p.fill('input[formcontrolname=username]', USER);
      await p.fill('input[formcontrolname=password]', PASSWORD);
      await p.click('button[type=submit]');
      await p.waitForURL(/projects|controller/, { timeout: 30000 });
      await p.goto(URL + '/static/web-ui/controller/1/project/' + PROJECT_ID);
      await p.waitForSelector('button.ai-chat-button', { timeout: 30000 });
      await p.click('button.ai-chat-button');
      const input = 'textarea.gns3-chat-input-area__textarea';
      await p.waitForSelector(input);
      await p.fill(input, 'Hello, what is in this lab?');
      await p.press(input, 'Control+Enter');
      await p.waitForSelector('.gns3-chat-message-list__bubble--assistant:not(.gns3-chat-message-list__bubble--streaming)', { timeout: 30000 });
      await p.waitForSelector(input + ':not([disabled])', { timeout: 30000 });
      // The fake GNS3 has no WebSocket notifications, so the UI says it lost its host: that toast
      // is the test bench's, not something a user of GNS3 sees.
      for (const close of await p.locator('.cdk-overlay-container button', { hasText: 'Close' }).all()) {
        await close.click().catch(() => {});
      }
      await p.waitForSelector('.cdk-overlay-container button:has-text("Close")', { state: 'detached', timeout: 5000 }).catch(() => {});
      await p.screenshot({ path: join(OUT, 'gns3-web-ui-panel.png') });
      if (refused.length) console.log(`GNS3's UI was refused:\n${refused.join('\n')}`);
    } catch (err) {
      await p.screenshot({ path: join(OUT, 'gns3-web-ui-failed.png') }).catch(() => {});
      throw new Error(`${err.message}\nrefused requests:\n${refused.join('\n')}`);
    } finally {
      await b.close();
    }
  });
});
