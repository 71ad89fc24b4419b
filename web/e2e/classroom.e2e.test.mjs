// Browser tests of the classroom pieces: the packet capture card (bar chart and conversations
// table, packets-so-far progress), a partial success shown amber, and the sidebar's Export menu.
// Started by TestClassroomPageInBrowser in web/classroom_browser_test.go, which scripts the model
// (see classroomScript there) and serves the real sample capture from the fake GNS3.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSignedIn, send, waitTurnDone } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;

const skip = URL ? false : 'COPILOT_URL is not set: run these through `go test ./web -run TestClassroomPageInBrowser`, which starts the service';

let browser;
let page;
const pageErrors = [];

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, name + '.png'), fullPage: false });
}

describe('classroom pieces of the chat page', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await openSignedIn(URL, USER, PASSWORD, pageErrors);
    page = browser.page;
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('a link capture shows packets so far, then protocol bars and a conversations table', async () => {
    await page.evaluate(() => {
      window.__progress = [];
      new MutationObserver(() => {
        for (const m of document.querySelectorAll('.tool-progress .item-message')) {
          if (!window.__progress.includes(m.textContent)) window.__progress.push(m.textContent);
        }
      }).observe(document.getElementById('conversation'), { subtree: true, childList: true, characterData: true });
    });
    await send(page, 'capture the PC1 to PC2 link');
    await page.waitForSelector('.tool-card .tool-progress .item-message', { timeout: 30000 });
    await shot('19-capture-running');
    await page.waitForSelector('.tool-card .capture-card', { timeout: 60000 });
    await waitTurnDone(page);

    const progress = await page.evaluate(() => window.__progress);
    assert.ok(progress.some((m) => /packets? so far/.test(m)), 'packets-so-far progress was shown: ' + JSON.stringify(progress));

    const bars = await page.$$eval('.capture-card .capture-bar', (gs) => gs.map((g) => [g.dataset.protocol, Number(g.dataset.packets), Number(g.querySelector('rect').getAttribute('width'))]));
    assert.deepEqual(
      bars.map(([p, n]) => [p, n]),
      [
        ['TCP', 18],
        ['ARP', 11],
        ['ICMP', 6],
        ['UDP', 4],
        ['ICMPv6', 2],
      ],
    );
    assert.ok(bars[0][2] > bars[1][2] && bars[1][2] > bars[4][2], 'bar widths follow the counts');
    const label = await page.getAttribute('.capture-card svg.capture-chart', 'aria-label');
    assert.match(label, /TCP 18, ARP 11/);

    const rows = await page.$$eval('.capture-conversations tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.equal(rows.length, 5);
    assert.deepEqual(rows[0].slice(0, 3), ['10.5.0.1', '10.5.0.2', '28']);
    assert.equal(rows[0][4], 'ICMP, TCP, UDP');
    assert.match(await page.textContent('.capture-head'), /^41 packets, 3028 bytes over 17\.1 s on PC1 Ethernet0 <-> PC2 Ethernet0$/);
    assert.equal(await page.getAttribute('.tool-card:last-of-type', 'data-state'), 'done');
    await page.$eval('.capture-card', (el) => el.scrollIntoView({ block: 'nearest' }));
    await shot('20-capture-card');
  });

  test('a partial success is amber, apart from success and failure', async () => {
    await send(page, 'show me partial output from R1');
    await page.waitForSelector('.tool-card[data-state="partly"]', { timeout: 60000 });
    await waitTurnDone(page);
    const card = '.tool-card[data-state="partly"]';
    assert.equal(await page.textContent(`${card} .tool-state`), 'Partly done');
    assert.equal(await page.textContent(`${card} .sum-partial`), '1 partly');
    assert.equal(await page.textContent(`${card} .sum-failed`), '0 failed');
    const item = `${card} .tool-item[data-state="partial"]`;
    assert.match(await page.textContent(`${item} pre`), /show version/);
    assert.match(await page.textContent(`${item} .item-note`), /debug all.*blocked/);
    assert.equal(await page.$(`${card} .tool-error`), null, 'no "all failed" error for a partial success');
    const colors = await page.evaluate((sel) => {
      const c = (q) => getComputedStyle(document.querySelector(q)).color;
      return { partial: c(sel + ' .mark-partial'), border: getComputedStyle(document.querySelector(sel.split(' ')[0])).borderLeftColor };
    }, item);
    assert.equal(colors.partial, 'rgb(154, 103, 0)', 'the mark is amber');
    assert.equal(colors.border, 'rgb(212, 167, 44)', 'the card is amber');
    await page.$eval(item, (el) => el.scrollIntoView({ block: 'nearest' }));
    await shot('21-partial-success');
  });

  test('the sidebar exports a session as JSON and as Markdown', async () => {
    const li = '#session-list li.session.active';
    await page.waitForSelector(`${li} .export-menu`);
    await page.click(`${li} .export-menu > summary`);
    await page.waitForSelector(`${li} .export-choices button[data-format="json"]`, { state: 'visible' });
    await shot('22-export-menu');

    const [json] = await Promise.all([page.waitForEvent('download'), page.click(`${li} .export-choices button[data-format="json"]`)]);
    assert.match(json.suggestedFilename(), /^capture-on-the-pc-link\.json$/);
    const data = JSON.parse(readFileSync(await json.path(), 'utf8'));
    assert.equal(data.title, 'Capture on the PC link');
    const roles = data.messages.map((m) => m.role);
    assert.deepEqual(roles.slice(0, 4), ['user', 'assistant', 'tool', 'assistant']);
    assert.equal(data.messages[2].name, 'analyze_link_capture');
    assert.ok(data.session.message_count >= 8, 'statistics come with the export');
    assert.equal(await page.$eval(`${li} .export-menu`, (d) => d.open), false, 'the menu closes after a choice');

    await page.click(`${li} .export-menu > summary`);
    const [md] = await Promise.all([page.waitForEvent('download'), page.click(`${li} .export-choices button[data-format="markdown"]`)]);
    assert.match(md.suggestedFilename(), /\.md$/);
    const text = readFileSync(await md.path(), 'utf8');
    assert.match(text, /^# Capture on the PC link\n/);
    assert.match(text, /\*\*Tool result\*\* `analyze_link_capture`: 1 total, 1 successful, 0 failed/);
    assert.match(text, /\| R1 \| ! partial_success \|/);
    assert.match(text, /```text\n[^`]*who-has 10\.5\.0\.9/);
  });

  test('no script errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
