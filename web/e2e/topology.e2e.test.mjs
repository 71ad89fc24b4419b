// Browser tests of the topology panel: the lab drawn beside the conversation, following GNS3 as
// a turn builds it. Started by `go test ./web -run TestTopologyPanelInBrowser`, which runs the
// service with the fake GNS3 and a model that creates two PCs, cables them and starts PC1.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, projectOption, signIn } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const PROJECT = process.env.COPILOT_PROJECT || 'lab1';
const BIG_PROJECT = process.env.COPILOT_BIG_PROJECT || '';
const CONTROL = process.env.COPILOT_CONTROL_URL || '';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;

const skip = URL ? false : 'COPILOT_URL is not set: run these through `go test ./web -run TestTopologyPanelInBrowser`, which starts the service';

let browser;
let page;
const pageErrors = [];
const cspViolations = [];

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, name + '.png'), fullPage: false });
}

async function until(fn, arg, timeout = 30000) {
  const handle = await page.waitForFunction(fn, arg, { timeout, polling: 50 });
  return handle.jsonValue();
}

const count = (sel) => page.$$eval(sel, (els) => els.length);
const lampFill = (name) =>
  page.$eval(`#topology .topo-node[data-name="${name}"] .topo-node-lamp`, (el) => getComputedStyle(el).fill);

async function selectProject(name) {
  const value = await projectOption(page, name).catch((err) => assert.fail(`project ${name} is listed: ${err.message}`));
  await page.selectOption('#project-select', value);
}

async function control(path) {
  const res = await fetch(CONTROL + path, { method: 'POST' });
  assert.equal(res.status, 204, `${path}: ${await res.text()}`);
}

describe('topology panel', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launch();
    ({ page } = browser);
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('console', (msg) => {
      if (/Content Security Policy|Trusted Type|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await page.goto(URL + '/');
    await signIn(page, USER, PASSWORD);
    await selectProject(PROJECT);
    await page.waitForSelector('#topology:not([hidden])');
    // A loaded machine may take a while to start the project's subscription.
    await until(() => document.querySelector('#topology-status')?.dataset.state === 'live', undefined, 60000);
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('nodes, then links, appear while a turn builds the lab; a started node changes colour', async () => {
    assert.equal(await count('#topology .topo-node'), 0, 'the lab starts empty');
    await shot('topology-0-empty');
    await page.fill('#composer-input', 'Please build the lab');
    await page.press('#composer-input', 'Enter');

    // The nodes come first, while the model still thinks about the link.
    await until(() => document.querySelectorAll('#topology .topo-node').length === 2);
    assert.equal(await count('#topology .topo-link'), 0, 'no link yet');
    assert.equal(await page.$eval('#topology .topo-node[data-name="PC1"]', (el) => el.dataset.status), 'stopped');
    const stoppedFill = await lampFill('PC1');
    await shot('topology-1-nodes');

    await until(() => document.querySelectorAll('#topology .topo-link').length === 1);
    const ports = await page.$$eval('#topology .topo-link .topo-port', (els) => els.map((e) => e.textContent));
    assert.deepEqual(ports, ['e0', 'e0'], 'both ends show their port');
    await shot('topology-2-link');

    await until(() => document.querySelector('#topology .topo-node[data-name="PC1"]')?.dataset.status === 'started');
    const startedFill = await lampFill('PC1');
    assert.notEqual(startedFill, stoppedFill, 'a started node is coloured differently from a stopped one');
    assert.equal(await page.$eval('#topology .topo-node[data-name="PC2"]', (el) => el.dataset.status), 'stopped');
    await page.waitForSelector('#send:not([hidden])', { timeout: 60000 });
    await shot('topology-3-started');

    // Nodes sit at their GNS3 coordinates: PC1 (x -200) left of PC2 (x 200), same height.
    const boxes = await page.$$eval('#topology .topo-node-box', (els) => els.map((e) => ({ x: Number(e.getAttribute('x')), y: Number(e.getAttribute('y')) })));
    assert.equal(boxes.length, 2);
    assert.ok(Math.abs(boxes[0].x - boxes[1].x) === 400 && boxes[0].y === boxes[1].y, JSON.stringify(boxes));
  });

  test('changes made outside the chat show at once: a move, a capture', async () => {
    await control('/move');
    await until(() => Number(document.querySelector('#topology .topo-node[data-name="PC2"] .topo-node-box')?.getAttribute('y')) === 206);
    await control('/capture');
    await page.waitForSelector('#topology .topo-link[data-capturing="true"] .topo-capture');
    await shot('topology-4-capture');
    await control('/condition');
    await page.waitForSelector('#topology .topo-link[data-conditioned="true"] .topo-condition');
    assert.equal(await page.$eval('#topology .topo-link[data-conditioned="true"] .topo-condition', (el) => el.textContent), 'delay 200 ms ±20 ms, 20 % packet loss');
    assert.match(await page.$eval('#topology .topo-link[data-conditioned="true"] > title', (el) => el.textContent), /— delay 200 ms ±20 ms, 20 % packet loss$/);
  });

  test('hovering a node name in a tool card highlights the node', async () => {
    const name = page.locator('.tool-card .tool-items .item-name', { hasText: /^PC1$/ }).first();
    await name.hover();
    await page.waitForSelector('#topology .topo-node.topo-hl[data-name="PC1"]');
    assert.equal(await count('#topology .topo-node.topo-hl'), 1);
    await shot('topology-5-hover');
    await page.mouse.move(5, 5);
    await until(() => document.querySelectorAll('#topology .topo-node.topo-hl').length === 0);
  });

  test('the panel collapses and opens again', async () => {
    await page.click('#topology-toggle');
    assert.equal(await page.$eval('#topology-body', (el) => el.hidden), true);
    assert.equal(await page.getAttribute('#topology-toggle', 'aria-expanded'), 'false');
    await shot('topology-6-collapsed');
    await page.click('#topology-toggle');
    assert.equal(await page.$eval('#topology-body', (el) => el.hidden), false);
  });

  test('a hundred-node lab is drawn whole and stays usable', { skip: BIG_PROJECT ? false : 'no big project' }, async () => {
    const started = Date.now();
    await selectProject(BIG_PROJECT);
    await until(() => document.querySelectorAll('#topology .topo-node').length === 100, undefined, 30000);
    await until(() => document.querySelectorAll('#topology .topo-link').length === 99);
    const ms = Date.now() - started;
    assert.ok(ms < 10000, `drawn in ${ms} ms`);
    const states = await page.$$eval('#topology .topo-node', (els) => new Set(els.map((e) => e.dataset.status)).size);
    assert.equal(states, 3, 'started, stopped and suspended nodes are all drawn');
    // The whole lab fits the panel: the viewBox covers every node.
    const fits = await page.$eval('#topology .topo-svg', (svg) => {
      const [x, y, w, h] = svg.getAttribute('viewBox').split(' ').map(Number);
      return [...svg.querySelectorAll('.topo-node-box')].every((r) => {
        const rx = Number(r.getAttribute('x'));
        const ry = Number(r.getAttribute('y'));
        return rx >= x && ry >= y && rx <= x + w && ry <= y + h;
      });
    });
    assert.ok(fits, 'every node inside the picture');
    // Zoom in to read a corner closely, then a double click shows the whole lab again.
    const width = () => page.$eval('#topology .topo-svg', (svg) => Number(svg.getAttribute('viewBox').split(' ')[2]));
    const whole = await width();
    const box = await page.locator('#topology .topo-svg').boundingBox();
    await page.mouse.move(box.x + box.width / 4, box.y + box.height / 3);
    for (let i = 0; i < 6; i++) await page.mouse.wheel(0, -120);
    await until((w) => Number(document.querySelector('#topology .topo-svg').getAttribute('viewBox').split(' ')[2]) < w / 2, whole);
    await shot('topology-8-hundred-nodes-zoomed');
    await page.dblclick('#topology .topo-svg');
    assert.equal(await width(), whole);
    // The page still answers: collapsing is immediate.
    const t0 = Date.now();
    await page.click('#topology-toggle');
    await page.click('#topology-toggle');
    assert.ok(Date.now() - t0 < 2000, 'toggling a 100-node panel stays quick');
    await shot('topology-7-hundred-nodes');
  });

  test('no page errors and no CSP violations', () => {
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(cspViolations, []);
  });
});
