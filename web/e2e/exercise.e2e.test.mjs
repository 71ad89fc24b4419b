// Browser tests of the exercise banner (web/static/exercise.js) against the real service, a
// real VPCS PC and the scripted model; launched by TestExerciseBannerInBrowser in web/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { openSignedIn, send, waitTurnDone } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const PC1 = process.env.COPILOT_PC1_CONSOLE || '';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;
const skip = URL && PC1 ? false : 'COPILOT_URL is not set: run these through `go test ./web -run TestExerciseBannerInBrowser`';

let browser;
let page;
const pageErrors = [];

/** atConsole sends one command to a VPCS console and resolves with what it printed until `until`. */
function atConsole(addr, command, until) {
  const [host, port] = addr.split(':');
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), host);
    let out = '';
    let sent = false;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('the console did not answer: ' + JSON.stringify(out)));
    }, 20000);
    sock.on('data', (b) => {
      out += b.toString('latin1');
      if (!sent && out.includes('> ')) {
        sent = true;
        out = '';
        sock.write(command + '\n');
      } else if (sent && out.includes(until)) {
        clearTimeout(timer);
        // Closed at once: a VPCS console serves one client, and the check needs it next.
        sock.destroy();
        resolve(out);
      }
    });
    sock.on('error', reject);
    sock.write('\n'); // wake the console; its prompt answers
  });
}

describe('exercise banner', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await openSignedIn(URL, USER, PASSWORD, pageErrors);
    page = browser.page;
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('Inject fault opens an exercise; the page shows that a fault was injected, never which', async () => {
    await page.click('#inject');
    const banner = '#exercise[data-status="open"]';
    await page.waitForSelector(banner, { timeout: 60000 });
    await page.waitForSelector('#send:not([hidden])', { timeout: 60000 });
    assert.match(await page.textContent('#exercise'), /a fault was injected into this lab/);
    const conversation = await page.textContent('#conversation');
    assert.match(conversation, /A network fault was injected/);
    assert.doesNotMatch(conversation, /10\.0\.0\.99/, 'the conversation does not show the fault');
    await page.screenshot({ path: join(ARTIFACTS, 'exercise-01-open.png') });
  });

  test('a hint, then a check that fails', async () => {
    await page.click('#exercise .exercise-hint');
    await page.waitForFunction(() => /Hint: One PC is not where it should be/.test(document.querySelector('#exercise .exercise-answer').textContent));
    assert.match(await page.textContent('#exercise .exercise-state'), /1 hint used/);
    await page.click('#exercise .exercise-check');
    await page.waitForFunction(() => /Not yet/.test(document.querySelector('#exercise .exercise-answer').textContent), null, { timeout: 60000 });
    assert.match(await page.textContent('#exercise .exercise-state'), /1 check, 1 hint used/);
  });

  test('"hint" typed in the chat is answered once, in the conversation, and counted in the banner', async () => {
    await send(page, 'hint');
    await waitTurnDone(page);
    await page.waitForFunction(() => /2 hints used/.test(document.querySelector('#exercise .exercise-state').textContent));
    const answers = await page.$$eval('.msg.assistant', (els) => els.map((el) => el.textContent));
    const last = answers[answers.length - 1];
    assert.match(last, /Hint: Look at the PCs' addresses\./);
    assert.equal(last.split("Look at the PCs' addresses").length - 1, 1, 'the answer is shown once: ' + last);
  });

  test('fixed at the console, the Check button says so, and the banner stays fixed after a reload', async () => {
    await atConsole(PC1, 'ip 10.0.0.1/24 10.0.0.254', 'gateway');
    await page.click('#exercise .exercise-check');
    await page.waitForFunction(() => !/Checking the lab/.test(document.querySelector('#exercise .exercise-answer').textContent), null, { timeout: 60000 });
    assert.match(await page.textContent('#exercise .exercise-answer'), /Fixed!/);
    assert.equal(await page.getAttribute('#exercise', 'data-status'), 'fixed');
    assert.ok(await page.$eval('#exercise .exercise-actions', (el) => el.hidden), 'a fixed exercise has nothing left to check');
    await page.screenshot({ path: join(ARTIFACTS, 'exercise-02-fixed.png') });
    await page.reload();
    await page.waitForSelector('#exercise[data-status="fixed"]', { timeout: 20000 });
    assert.match(await page.textContent('#exercise'), /Exercise fixed after 2 checks and 2 hints used/);
    assert.deepEqual(pageErrors, []);
  });
});
