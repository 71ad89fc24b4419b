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

  test('an ordinary session opens without a request that fails; the exercise session still shows its exercise', async () => {
    const exerciseSession = await page.getAttribute('#session-list li.active', 'data-session-id');
    await page.click('#new-chat');
    await send(page, 'Which nodes are stopped?');
    await waitTurnDone(page);
    await page.waitForSelector('#session-list li:nth-child(2)');
    const ordinary = await page.getAttribute('#session-list li.active', 'data-session-id');
    assert.notEqual(ordinary, exerciseSession);

    const net = watchNetwork(page);
    // Opening a session ends by reading its approvals (and its exercise, when it has one) at once:
    // once the approvals answered, every request of the opening has been made.
    const approvals = page.waitForResponse((r) => r.url().includes(`/sessions/${ordinary}/approvals`));
    await page.reload();
    await page.waitForSelector(`#session-list li.active[data-session-id="${ordinary}"]`);
    await page.waitForSelector('#conversation .msg.assistant');
    await approvals;
    await net.settled();
    console.log(`opening an ordinary session after a reload:\n  ${net.seen.join('\n  ')}`);
    assert.ok(net.seen.some((r) => r.includes(`/sessions/${ordinary}/history`)), 'the session was opened');
    assert.deepEqual(net.failed, [], 'no request answered 4xx/5xx');
    assert.deepEqual(net.consoleErrors, [], 'nothing was logged as an error');
    assert.ok(!net.seen.some((r) => /\/sessions\/[^/ ]+\/exercise /.test(r)), 'an ordinary session is not asked for an exercise');
    assert.ok(await page.$eval('#exercise', (el) => el.hidden), 'an ordinary session shows no exercise');

    await page.click(`#session-list li[data-session-id="${exerciseSession}"] .session-select`);
    await page.waitForSelector('#exercise[data-status="fixed"]', { timeout: 20000 });
    assert.match(await page.textContent('#exercise'), /Exercise fixed after 2 checks and 2 hints used/);
    await net.settled();
    assert.ok(net.seen.some((r) => r.startsWith(`GET /v3/projects/`) && r.endsWith(`/sessions/${exerciseSession}/exercise 200`)), net.seen.join('\n'));
    assert.deepEqual(net.failed, []);
    assert.deepEqual(net.consoleErrors, []);
    net.stop();
    assert.deepEqual(pageErrors, []);
  });
});

/**
 * watchNetwork records the page's requests ("METHOD /path status"), those answered 4xx/5xx or
 * failing for another reason than the page dropping them itself (a reload, a closed stream), and
 * the console's errors. settled() resolves once no request is in flight but the lab's
 * long-lived topology stream.
 */
function watchNetwork(page) {
  const seen = [];
  const failed = [];
  const consoleErrors = [];
  const inFlight = new Set();
  let waiters = [];
  const lasting = (req) => req.url().endsWith('/topology/stream');
  const busy = () => [...inFlight].some((r) => !lasting(r));
  const done = (req) => {
    inFlight.delete(req);
    if (busy()) return;
    for (const resolve of waiters) resolve();
    waiters = [];
  };
  const onRequest = (req) => inFlight.add(req);
  const onFinished = async (req) => {
    const res = await req.response();
    const line = `${req.method()} ${new globalThis.URL(req.url()).pathname} ${res ? res.status() : 'no answer'}`;
    seen.push(line);
    if (!res || res.status() >= 400) failed.push(line);
    done(req);
  };
  const onFailed = (req) => {
    const why = req.failure()?.errorText || '';
    seen.push(`${req.method()} ${new globalThis.URL(req.url()).pathname} ${why}`);
    if (why !== 'net::ERR_ABORTED') failed.push(`${req.method()} ${req.url()} ${why}`);
    done(req);
  };
  const onConsole = (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  };
  page.on('request', onRequest);
  page.on('requestfinished', onFinished);
  page.on('requestfailed', onFailed);
  page.on('console', onConsole);
  return {
    seen,
    failed,
    consoleErrors,
    settled: () => (busy() ? new Promise((resolve) => waiters.push(resolve)) : Promise.resolve()),
    stop() {
      page.off('request', onRequest);
      page.off('requestfinished', onFinished);
      page.off('requestfailed', onFailed);
      page.off('console', onConsole);
    },
  };
}
