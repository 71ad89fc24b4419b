// End-to-end tests of the chat page in headless Chromium (Debian's package, driven by
// playwright-core; no browser is ever downloaded). They run against the real service with the
// fake GNS3 server and the scripted model, started by the Go launcher in web/browser_test.go,
// which passes the address in COPILOT_URL. The model's answers are chosen by words in the
// message typed here (see pageScript in that file).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, projectOption, signIn } from './browser.mjs';

const URL = process.env.COPILOT_URL;
const USER = process.env.COPILOT_USER || 'alice';
const PASSWORD = process.env.COPILOT_PASSWORD || 'alice-password';
const PROJECT = process.env.COPILOT_PROJECT || 'lab1';
const CLOSED_PROJECT = process.env.COPILOT_CLOSED_PROJECT || '';
const CUT_URL = process.env.COPILOT_CUT_URL || '';
const CUT_CONTROL = process.env.COPILOT_CUT_CONTROL || '';
const ARTIFACTS = process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname;

const skip = URL ? false : 'COPILOT_URL is not set: run these through `go test ./web -run TestChatPageInBrowser`, which starts the service';

let browser;
let context;
let page;
const pageErrors = [];
const cspViolations = [];
const joinRequests = [];

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, name + '.png'), fullPage: false });
}

/** until polls fn in the page context until it returns a truthy value. */
async function until(fn, arg, timeout = 20000) {
  const handle = await page.waitForFunction(fn, arg, { timeout, polling: 50 });
  return handle.jsonValue();
}

const assistantTexts = () => page.$$eval('.msg.assistant .md', (els) => els.map((e) => e.textContent));
const lastAssistant = '.msg.assistant:last-of-type';

async function send(text) {
  await page.fill('#composer-input', text);
  await page.press('#composer-input', 'Enter');
}

async function waitTurnDone(timeout = 60000) {
  await page.waitForSelector('#send:not([hidden])', { timeout });
  await page.waitForSelector('.msg.assistant.streaming', { state: 'detached', timeout });
}

async function newChat() {
  await page.click('#new-chat');
  await page.waitForSelector('.empty-state');
}

describe('chat page', { skip }, () => {
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launch();
    ({ context, page } = browser);
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('console', (msg) => {
      if (/Content Security Policy|Trusted Type|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
    });
    page.on('request', (req) => {
      if (req.method() === 'GET' && /\/chat\/sessions\/[^/]+\/stream$/.test(new globalThis.URL(req.url()).pathname)) {
        joinRequests.push(req.headers()['last-event-id'] || '');
      }
    });
  });

  after(async () => {
    if (browser) await browser.close();
  });

  test('the page is served with a strict CSP and signs in', async () => {
    const res = await page.goto(URL + '/');
    assert.equal(res.status(), 200);
    const csp = res.headers()['content-security-policy'] || '';
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /require-trusted-types-for 'script'/);
    await page.waitForSelector('#signin-form');

    // A wrong password is explained, and the token never lands in a cookie or the URL.
    await page.fill('#signin-username', USER);
    await page.fill('#signin-password', 'wrong-password');
    await page.click('#signin-submit');
    await page.waitForSelector('#signin-error:not([hidden])');
    assert.match(await page.textContent('#signin-error'), /wrong username or password/i);

    await page.fill('#signin-password', PASSWORD);
    await shot('01-sign-in');
    await page.click('#signin-submit');
    await page.waitForSelector('#view-app:not([hidden])');
    assert.equal((await context.cookies()).length, 0, 'no cookies');
    assert.ok(!page.url().includes('token'), 'no token in the URL');
    const stored = await page.evaluate(() => sessionStorage.getItem('gns3copilot.token'));
    assert.ok(stored && stored.length > 10, 'token kept in sessionStorage');
    assert.equal(await page.textContent('#user-name'), USER);
  });

  test('the project picker lists opened projects first and selects one', async () => {
    await projectOption(page, PROJECT);
    const options = await page.$$eval('#project-select option', (os) => os.map((o) => ({ text: o.textContent, group: o.parentElement.label })));
    assert.equal(options[0].group, 'Opened');
    assert.equal(options[0].text, PROJECT);
    if (CLOSED_PROJECT) {
      const closed = options.find((o) => o.text.startsWith(CLOSED_PROJECT));
      assert.ok(closed, 'the closed project is listed');
      assert.equal(closed.group, 'Closed');
    }
    assert.equal(await page.textContent('#project-status'), 'opened');
    await page.waitForSelector('.empty-state');
    await shot('02-new-chat');
  });

  test('a message streams a Markdown answer in', async () => {
    // Record what the user saw while the answer was streaming.
    await page.evaluate(() => {
      window.__stream = { lengths: [], stopShown: false };
      new MutationObserver(() => {
        const msg = document.querySelector('.msg.assistant.streaming');
        const md = msg && msg.querySelector('.md');
        if (!md) return;
        const log = window.__stream;
        if (md.textContent.length !== log.lengths.at(-1)) log.lengths.push(md.textContent.length);
        if (!document.getElementById('stop').hidden) log.stopShown = true;
      }).observe(document.getElementById('conversation'), { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await send('hello copilot');
    await page.waitForSelector('.msg.user >> text=hello copilot');
    await page.waitForSelector('.msg.assistant.streaming .md');
    await shot('03-streaming');
    await waitTurnDone();
    const seen = await page.evaluate(() => window.__stream);
    assert.ok(seen.lengths.length >= 3, `the text grew in steps while streaming: ${seen.lengths}`);
    // (Not strictly growing: a table's pipes vanish from the text once its separator row arrives.)
    const firstText = seen.lengths.find((n) => n > 0);
    assert.ok(firstText < seen.lengths.at(-1) / 3, `the first text shown was a small part of the answer: ${seen.lengths}`);
    assert.ok(seen.stopShown, 'Stop is offered while the copilot answers');
    const text = (await assistantTexts()).at(-1);
    assert.match(text, /Hello!/);
    assert.equal(await page.textContent(`${lastAssistant} .md strong`), 'Hello!');
    assert.equal(await page.textContent(`${lastAssistant} .md code`), 'lab1');
    assert.equal(await page.$$eval(`${lastAssistant} .md li`, (l) => l.length), 2);
    assert.equal(await page.$$eval(`${lastAssistant} .md table tbody tr`, (r) => r.length), 2);

    // The new session appears in the sidebar with its statistics.
    await page.waitForSelector('.session.active');
    await until(() => /[1-9]\d* messages? · [1-9]\d* LLM calls? · [1-9][\d.]*k? tokens/.test(document.querySelector('.session.active .session-stats').textContent));
    const stats = await page.textContent('.session.active .session-stats');
    assert.match(stats, /[1-9]\d* messages? · [1-9]\d* LLM calls? · [1-9][\d.]*k? tokens/);
    await shot('04-answer-and-sidebar');
  });

  test('a tool card fills in, shows progress while running, and ends with ✓/✗ rows', async () => {
    await newChat();
    // Record every state the card goes through, as the user would have seen it.
    await page.evaluate(() => {
      window.__cardLog = { args: [], states: [], progress: 0 };
      new MutationObserver(() => {
        const card = document.querySelector('.tool-card');
        if (!card) return;
        const log = window.__cardLog;
        const args = card.querySelector('.tool-args-text').textContent;
        if (args !== log.args.at(-1)) log.args.push(args);
        if (card.dataset.state !== log.states.at(-1)) log.states.push(card.dataset.state);
        log.progress = Math.max(log.progress, card.querySelectorAll('.tool-progress:not([hidden]) .progress-row').length);
      }).observe(document.getElementById('conversation'), { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await send('Please start the lab');
    await page.waitForSelector('.tool-card');
    assert.match(await page.textContent('.tool-card .tool-name'), /start_gns3_node/);
    await page.waitForSelector('.tool-card[data-state="running"]', { timeout: 30000 });
    await shot('05-tool-running');
    await page.waitForSelector('.tool-card[data-state="partial"]', { timeout: 60000 });
    await waitTurnDone();
    await shot('06-tool-result');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('06b-tool-result-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    const log = await page.evaluate(() => window.__cardLog);
    assert.ok(log.args.length >= 3, `arguments filled in step by step: ${JSON.stringify(log.args)}`);
    assert.ok(log.args.some((a) => a.length > 0 && !a.includes('PC3')), 'a partial argument string was shown');
    assert.deepEqual(JSON.parse(log.args.at(-1)), { node_ids: ['PC1', 'PC2', 'PC3'] });
    assert.ok(log.states.includes('running'), `states: ${log.states}`);
    assert.ok(log.progress >= 1, 'per-node progress was shown while the tool ran');

    const summary = await page.textContent('.tool-card .tool-summary');
    assert.match(summary, /3 total/);
    assert.match(summary, /2 successful/);
    assert.match(summary, /1 failed/);
    const rows = await page.$$eval('.tool-card .tool-item', (items) =>
      items.map((li) => ({
        state: li.dataset.state,
        mark: li.querySelector('.mark [aria-hidden]').textContent,
        name: li.querySelector('.item-name').textContent,
        color: getComputedStyle(li.querySelector('.mark')).color,
        text: li.textContent,
      })),
    );
    assert.equal(rows.length, 3);
    const ok = rows.filter((r) => r.state === 'ok');
    const bad = rows.filter((r) => r.state === 'failed');
    assert.deepEqual(ok.map((r) => r.name).sort(), ['PC1', 'PC2']);
    assert.deepEqual(bad.map((r) => r.name), ['PC3']);
    assert.ok(ok.every((r) => r.mark === '✓'));
    assert.equal(bad[0].mark, '✗');
    assert.match(bad[0].text, /could not bind its console port/);
    const [r, gr, b] = ok[0].color.match(/\d+/g).map(Number);
    assert.ok(gr > r && gr > b, `✓ is green (${ok[0].color})`);
    const [r2, g2, b2] = bad[0].color.match(/\d+/g).map(Number);
    assert.ok(r2 > g2 && r2 > b2, `✗ is red (${bad[0].color})`);
    assert.match((await assistantTexts()).at(-1), /PC3 could not start/);
  });

  test('sessions can be renamed inline, pinned and deleted with confirmation', async () => {
    await page.waitForSelector('.session-list .session >> nth=1');
    const titles = () => page.$$eval('.session .session-title', (t) => t.map((e) => e.textContent.replace(/^Pinned: /, '')));
    const before = await titles();
    assert.equal(before.length, 2);

    // Rename the second (older) conversation.
    const second = page.locator('.session').nth(1);
    await second.locator('[data-action="rename"]').click();
    const input = page.locator('.rename-input');
    await input.fill('Renamed by the browser test');
    await input.press('Enter');
    await page.waitForSelector('.session-title >> text=Renamed by the browser test');

    // Pin it: it moves to the top and says so.
    const renamed = page.locator('.session', { hasText: 'Renamed by the browser test' });
    await renamed.locator('[data-action="pin"]').click();
    await until(() => document.querySelector('.session').textContent.includes('Renamed by the browser test') && document.querySelector('.session').classList.contains('pinned'));
    assert.equal(await page.locator('.session').first().locator('[data-action="pin"]').getAttribute('aria-pressed'), 'true');
    await shot('07-sidebar-renamed-pinned');

    // The server kept both: a reload shows the same order and title.
    await page.reload();
    await page.waitForSelector('.session.pinned');
    assert.equal((await titles())[0], 'Renamed by the browser test');

    // Unpin, then delete the other conversation, confirming in the dialog.
    await page.locator('.session.pinned [data-action="pin"]').click();
    await page.waitForSelector('.session.pinned', { state: 'detached' });
    const victim = page.locator('.session', { hasNotText: 'Renamed by the browser test' }).first();
    const victimTitle = (await victim.locator('.session-title').textContent()).trim();
    await victim.locator('[data-action="delete"]').click();
    await page.waitForSelector('#confirm-dialog[open]');
    assert.match(await page.textContent('#confirm-text'), new RegExp(victimTitle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    await shot('08-delete-confirmation');
    // Cancelling keeps it.
    await page.click('#confirm-dialog button[value="cancel"]');
    assert.equal((await titles()).length, 2);
    await victim.locator('[data-action="delete"]').click();
    await page.click('#confirm-ok');
    await until(() => document.querySelectorAll('.session').length === 1);
    assert.deepEqual(await titles(), ['Renamed by the browser test']);
  });

  test('the stop button aborts a running turn and keeps the partial answer', async () => {
    await newChat();
    await send('tell me a slow story');
    await until(() => {
      const md = document.querySelector('.msg.assistant.streaming .md');
      return md && md.textContent.length > 60;
    });
    await page.waitForSelector('#stop:not([disabled])');
    await page.click('#stop');
    await page.waitForSelector(`${lastAssistant} .notice-stopped`, { timeout: 30000 });
    await waitTurnDone();
    const text = (await assistantTexts()).at(-1);
    assert.ok(text.length > 60, 'the partial text stays');
    assert.ok(!text.includes('END-OF-STORY'), 'the answer was cut short');
    await shot('09-stopped');
    // The session's history keeps the partial answer too.
    await page.reload();
    await page.waitForSelector('.msg.assistant .md');
    assert.ok((await assistantTexts()).at(-1).length > 20);
  });

  test('reloading mid-turn rejoins the stream and shows everything, once', async () => {
    await newChat();
    await send('another slow story please');
    await until(() => {
      const md = document.querySelector('.msg.assistant.streaming .md');
      return md && md.textContent.length > 80;
    });
    const seen = (await assistantTexts()).at(-1);
    joinRequests.length = 0;
    await page.reload();
    await page.waitForSelector('.msg.user >> text=another slow story please');
    await page.waitForSelector('.msg.assistant.streaming .md');
    // What was shown before the reload is there again at once, and the answer goes on.
    const after = (await assistantTexts()).at(-1);
    assert.ok(after.startsWith(seen.slice(0, 60)), 'the text from before the reload is shown');
    await shot('10-rejoined-mid-turn');
    assert.ok(joinRequests.length >= 1 && joinRequests[0] !== '', `rejoined with Last-Event-ID (${JSON.stringify(joinRequests)})`);
    await waitTurnDone();
    const final = (await assistantTexts()).at(-1);
    assert.ok(final.includes('END-OF-STORY'), 'the turn finished');
    assert.equal(final.split('Step 3 checks').length, 2, 'nothing shown twice');
    assert.ok(final.startsWith('Here is a long walk through the lab.'), final.slice(0, 80));
    assert.equal(await page.$$eval('.msg.user', (m) => m.filter((x) => x.textContent.includes('another slow story please')).length), 1);
    await shot('11-rejoined-finished');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('gns3copilot.live')), null, 'the live record is cleared once the turn is over');
  });

  test('another tab that opens a running conversation shows its question at once and follows the answer', async (t) => {
    await newChat();
    await send('a slow story for two tabs');
    await until(() => {
      const md = document.querySelector('.msg.assistant.streaming .md');
      return md && md.textContent.length > 40;
    });
    // The title changes when the turn ends; the session id does not.
    const sessionId = await page.getAttribute('.session.active', 'data-session-id');
    const entry = `.session[data-session-id="${sessionId}"] .session-select`;

    const other = await context.newPage();
    try {
      other.on('pageerror', (err) => pageErrors.push(String(err)));
      const joins = [];
      other.on('request', (req) => {
        if (req.method() === 'GET' && /\/sessions\/[^/]+\/stream$/.test(new globalThis.URL(req.url()).pathname)) joins.push(req.headers()['last-event-id'] || '');
      });
      await other.goto(URL + '/');
      await signIn(other, USER, PASSWORD);
      await other.waitForSelector('.empty-state');
      // Record what this tab shows from the click on: when the question first appears, and how
      // the answer grows.
      await other.evaluate(() => {
        window.__join = { t0: 0, question: null, lengths: [], users: 0 };
        new MutationObserver(() => {
          const log = window.__join;
          const users = [...document.querySelectorAll('.msg.user')].filter((m) => m.textContent.includes('a slow story for two tabs'));
          log.users = Math.max(log.users, users.length);
          const answer = document.querySelector('.msg.assistant.streaming');
          if (users.length && !log.question) {
            log.question = {
              ms: Math.round(performance.now() - log.t0),
              streaming: !!answer,
              beforeAnswer: !!answer && !!(users[0].compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING),
              answerText: answer ? answer.textContent : '',
              stop: !document.getElementById('stop').hidden && !document.getElementById('stop').disabled,
            };
          }
          const md = answer && answer.querySelector('.md');
          if (md && md.textContent.length !== log.lengths.at(-1)) log.lengths.push(md.textContent.length);
        }).observe(document.getElementById('conversation'), { subtree: true, childList: true, characterData: true });
      });
      await other.evaluate(() => (window.__join.t0 = performance.now()));
      await other.click(entry);
      await other.waitForSelector('.msg.user >> text=a slow story for two tabs', { timeout: 20000 });
      const q = await other.evaluate(() => window.__join.question);
      t.diagnostic(`the question appeared ${q.ms} ms after the click`);
      // Three requests (sessions, history, stream) and the first event; a page that still waited
      // to see whether the replay went quiet could not show it before a second had passed.
      assert.ok(q.ms < 1000, `the question was shown at once, not after a wait (${q.ms} ms)`);
      assert.ok(q.streaming, 'the question is shown while the answer is still being written');
      assert.ok(q.beforeAnswer, 'the question comes before the answer');
      assert.ok(!q.answerText.includes('END-OF-STORY'), 'the turn had not ended yet');
      assert.ok(q.stop, 'Stop is offered for the running turn');
      await other.waitForSelector('.msg.assistant.streaming .md', { timeout: 20000 });
      await other.screenshot({ path: join(ARTIFACTS, '12-second-tab-live.png') });
      assert.deepEqual(joins, [''], 'joined the running turn once, from its start');

      await other.waitForSelector('.msg.assistant.streaming', { state: 'detached', timeout: 60000 });
      const text = await other.$$eval('.msg.assistant .md', (els) => els.at(-1).textContent);
      assert.ok(text.startsWith('Here is a long walk through the lab.') && text.includes('END-OF-STORY'), text.slice(0, 80));
      assert.equal(text.split('Step 3 checks').length, 2, 'nothing shown twice');
      const log = await other.evaluate(() => window.__join);
      assert.ok(log.lengths.length >= 3, `the answer grew in steps in this tab: ${log.lengths}`);
      assert.equal(log.users, 1, 'the question was never shown twice');
      // Once over, the conversation is the stored one, with the user's message once.
      await other.waitForSelector('.msg.user >> text=a slow story for two tabs');
      assert.equal(await other.locator('.msg.user', { hasText: 'a slow story for two tabs' }).count(), 1);
      assert.equal(await other.isVisible('#stop'), false);
    } finally {
      await other.close();
    }
    await waitTurnDone();
  });

  test('opening a finished conversation shows it without a spinner, a Stop button or a stream', async () => {
    await waitTurnDone();
    const sessionId = await page.getAttribute('.session.active', 'data-session-id');
    const entry = `.session[data-session-id="${sessionId}"] .session-select`;
    const count = await page.locator('.msg.assistant').count();
    assert.ok(count >= 1);
    // Anything that looks like a running turn, from the click on, is noted.
    const watchBusy = () =>
      page.evaluate(() => {
        window.__busy = [];
        const check = () => {
          if (document.querySelector('.conversation .spinner, .msg.assistant.streaming, .msg[aria-busy="true"]')) window.__busy.push('spinner');
          if (!document.getElementById('stop').hidden) window.__busy.push('stop');
        };
        new MutationObserver(check).observe(document.getElementById('view-app'), { subtree: true, childList: true, attributes: true });
      });
    await newChat();
    await watchBusy();
    joinRequests.length = 0;
    const history = page.waitForResponse((r) => r.request().method() === 'GET' && /\/sessions\/[^/]+\/history$/.test(new globalThis.URL(r.url()).pathname));
    await page.click(entry);
    await (await history).finished();
    await page.waitForSelector('.loading', { state: 'detached' });
    await page.waitForSelector('.msg.assistant');
    assert.equal(await page.locator('.msg.assistant').count(), count, 'its turns are shown once');
    assert.deepEqual(await page.evaluate(() => window.__busy), [], 'no spinner and no Stop button');
    assert.equal(await page.isVisible('#stop'), false);
    assert.equal(await page.isVisible('#send'), true);
    assert.deepEqual(joinRequests, [], 'no stream is joined for a finished turn');

    // The same after a reload.
    const historyAgain = page.waitForResponse((r) => r.request().method() === 'GET' && /\/sessions\/[^/]+\/history$/.test(new globalThis.URL(r.url()).pathname));
    await page.reload();
    await (await historyAgain).finished();
    await page.waitForSelector('.msg.assistant');
    assert.equal(await page.locator('.msg.assistant').count(), count);
    assert.equal(await page.locator('.conversation .spinner, .msg.assistant.streaming').count(), 0);
    assert.equal(await page.isVisible('#stop'), false);
    assert.deepEqual(joinRequests, [], 'no stream is joined after a reload either');
  });

  test('a reload whose saved turn ended meanwhile shows the turn running now, from its start', async () => {
    await newChat();
    await send('hello again');
    await waitTurnDone();
    const sessionId = await page.getAttribute('.session.active', 'data-session-id');
    const projectId = await page.evaluate(() => sessionStorage.getItem('gns3copilot.project'));
    const token = await page.evaluate(() => sessionStorage.getItem('gns3copilot.token'));
    // Another client starts the next turn; leaving its stream does not stop it.
    const res = await fetch(`${URL}/v3/projects/${encodeURIComponent(projectId)}/chat/stream`, {
      method: 'POST',
      headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'a slow story started elsewhere', session_id: sessionId, stream: true, mode: 'text' }),
    });
    assert.equal(res.status, 200);
    await res.body.cancel();
    // This tab's record is of the earlier turn, as if it had been reloaded in the middle of it.
    await page.evaluate(
      ({ projectId, sessionId }) =>
        sessionStorage.setItem(
          'gns3copilot.live',
          JSON.stringify({
            projectId,
            sessionId,
            turnId: 'an-earlier-turn',
            message: 'hello again',
            lastEventId: '1-0',
            events: [
              ['turn_started', { type: 'turn_started', session_id: sessionId, turn_id: 'an-earlier-turn' }],
              ['content', { type: 'content', content: 'A PARTIAL ANSWER FROM BEFORE' }],
            ],
          }),
        ),
      { projectId, sessionId },
    );
    joinRequests.length = 0;
    await page.reload();
    await page.waitForSelector('.msg.user >> text=a slow story started elsewhere');
    await page.waitForSelector('.msg.assistant.streaming .md');
    await waitTurnDone();
    const texts = await assistantTexts();
    const final = texts.at(-1);
    assert.ok(final.startsWith('Here is a long walk through the lab.') && final.includes('END-OF-STORY'), final.slice(0, 80));
    assert.equal(final.split('Step 3 checks').length, 2, 'nothing shown twice');
    assert.ok(!texts.join('\n').includes('A PARTIAL ANSWER FROM BEFORE'), 'the old record is gone');
    assert.equal(await page.locator('.msg.user', { hasText: 'hello again' }).count(), 1);
    assert.equal(await page.locator('.msg.user', { hasText: 'a slow story started elsewhere' }).count(), 1);
    assert.equal(joinRequests[0], '1-0', `first tried the saved event id: ${JSON.stringify(joinRequests)}`);
    assert.ok(joinRequests.includes(''), `then followed the running turn from its start: ${JSON.stringify(joinRequests)}`);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('gns3copilot.live')), null);
  });

  test('a dropped connection is rejoined in place, with nothing missed or repeated', { skip: !CUT_URL && 'no cutting proxy' }, async () => {
    // Another origin in front of the same service, whose connections the test can cut.
    const other = await context.newPage();
    try {
      const joins = [];
      other.on('request', (req) => {
        if (req.method() === 'GET' && /\/sessions\/[^/]+\/stream$/.test(new globalThis.URL(req.url()).pathname)) joins.push(req.headers()['last-event-id'] || '');
      });
      await other.goto(CUT_URL + '/');
      await signIn(other, USER, PASSWORD);
      await other.waitForSelector('.empty-state, .msg');
      await other.click('#new-chat');
      await other.fill('#composer-input', 'a slow story over a bad network');
      await other.press('#composer-input', 'Enter');
      await other.waitForFunction(() => {
        const md = document.querySelector('.msg.assistant.streaming .md');
        return md && md.textContent.length > 60;
      });
      const res = await fetch(CUT_CONTROL, { method: 'POST' });
      assert.ok(Number(await res.text()) >= 1, 'a connection was cut');
      await other.waitForSelector('.msg.assistant.streaming', { state: 'detached', timeout: 60000 });
      const text = await other.$$eval('.msg.assistant .md', (els) => els.at(-1).textContent);
      assert.ok(text.startsWith('Here is a long walk through the lab.') && text.includes('END-OF-STORY'), text.slice(0, 80));
      for (const step of ['Step 1 checks', 'Step 20 checks', 'Step 50 checks', 'Step 70 checks']) {
        assert.equal(text.split(step).length, 2, `${step} shown exactly once`);
      }
      assert.ok(joins.length >= 1 && joins[0] !== '', `rejoined with Last-Event-ID: ${JSON.stringify(joins)}`);
      assert.equal(await other.locator('.conversation .notice-error').count(), 0, 'no error shown for a connection that came back');
      assert.equal(await other.isVisible('#banner'), false);
    } finally {
      await other.close();
    }
  });

  test('a retried model call replaces its partial text instead of repeating it', async () => {
    await newChat();
    await page.evaluate(() => {
      window.__sawPartial = false;
      new MutationObserver(() => {
        if (document.querySelector('.conversation').textContent.includes('This partial answer')) window.__sawPartial = true;
      }).observe(document.getElementById('conversation'), { subtree: true, childList: true, characterData: true });
    });
    await send('a flaky answer please');
    await waitTurnDone(90000);
    const text = (await assistantTexts()).at(-1);
    assert.equal(text.trim(), 'The recovered answer, streamed again from its start.');
    assert.equal(await page.evaluate(() => window.__sawPartial), true, 'the first attempt was shown while it streamed');
  });

  test('a model answer containing <script> is rendered as text', async () => {
    await newChat();
    await send('show me a script tag');
    await waitTurnDone();
    const last = page.locator('.msg.assistant').last();
    const text = await last.textContent();
    assert.ok(text.includes('<script>window.__pwned = 1</script>'), text);
    assert.ok(text.includes('<img src=x onerror="window.__pwned = 2">'));
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing from the answer ran');
    assert.equal(await last.locator('script').count(), 0);
    assert.equal(await last.locator('img').count(), 0);
    assert.equal(await last.locator('a[href^="javascript"]').count(), 0);
    assert.equal(await last.locator('pre code').textContent(), '<script>window.__pwned = 4</script>');
    assert.ok(text.includes('harmless looking link'));
    await shot('13-script-as-text');
    // And again from the stored history.
    await page.reload();
    await page.waitForSelector('.msg.assistant');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.locator('.conversation script, .conversation img').count(), 0);
  });

  test('long device output folds into a collapsible monospace block; device text stays text', async () => {
    // The page's own module, in the page, on a result as a show command on three devices gives.
    const r = await page.evaluate(async () => {
      const { ToolCard } = await import('/toolcards.js');
      const card = new ToolCard({ id: 'call_show', name: 'execute_multiple_device_commands' });
      card.setArguments('{"device_names":["R1","R2","R3"],"commands":["show run"]}', true);
      card.setRunning();
      const long = Array.from({ length: 40 }, (_, i) => `interface Gi0/${i}\n description <b>uplink</b>`).join('\n');
      card.setResult(JSON.stringify({
        success: false, total: 3, successful: 1, failed: 1,
        data: [
          { id: 'r1', name: 'R1', status: 'success', result: long },
          { id: 'r2', name: 'R2', status: 'failed', error: 'Connection refused' },
          { id: 'r3', name: 'R3', status: 'pending' },
        ],
        metadata: { tool_name: 'execute_multiple_device_commands', execution_time: 5.2 },
      }));
      card.el.id = 'component-card';
      document.getElementById('conversation').append(card.el);
      const details = card.el.querySelector('details.long-output');
      return {
        folded: !!details && !details.open,
        summary: details && details.querySelector('summary').textContent,
        mono: getComputedStyle(card.el.querySelector('.tool-item pre')).fontFamily,
        marks: [...card.el.querySelectorAll('.tool-item .mark [aria-hidden]')].map((m) => m.textContent),
        unknownColor: getComputedStyle(card.el.querySelector('.mark-unknown')).color,
        bold: card.el.querySelectorAll('b').length,
        state: card.el.dataset.state,
      };
    });
    assert.equal(r.folded, true, 'the long output starts folded');
    assert.equal(r.summary, 'Output — 80 lines');
    assert.match(r.mono, /mono/i);
    assert.deepEqual(r.marks, ['✓', '✗', '?']);
    const [cr, cg, cb] = r.unknownColor.match(/\d+/g).map(Number);
    assert.ok(Math.abs(cr - cg) < 20 && Math.abs(cg - cb) < 30, `? is grey (${r.unknownColor})`);
    assert.equal(r.bold, 0, 'HTML in device output is text');
    assert.equal(r.state, 'partial');
    await page.click('#component-card details.long-output summary');
    assert.equal(await page.$eval('#component-card details.long-output', (d) => d.open), true, 'it unfolds');
    await page.$eval('#component-card', (el) => el.scrollIntoView({ block: 'nearest' }));
    assert.equal(await page.evaluate(() => document.scrollingElement.scrollTop), 0, 'only the conversation scrolls, never the page');
    await shot('13b-long-output-folded');
    await page.$eval('#component-card', (el) => el.remove());
  });

  test('a closed project explains itself and can be opened', { skip: !CLOSED_PROJECT && 'no closed project' }, async () => {
    const value = await page.$eval('#project-select', (s, name) => [...s.options].find((o) => o.textContent.startsWith(name)).value, CLOSED_PROJECT);
    await page.selectOption('#project-select', value);
    await page.waitForSelector('.notice >> text=The copilot works on opened projects only');
    assert.equal(await page.isDisabled('#composer-input'), true);
    await shot('14-project-closed');
    await page.locator('.conversation button', { hasText: 'Open project' }).click();
    await until(() => document.getElementById('project-status').textContent === 'opened');
    await page.waitForSelector('.empty-state');
    assert.equal(await page.isDisabled('#composer-input'), false);
    // Back to the first project.
    const first = await page.$eval('#project-select', (s, name) => [...s.options].find((o) => o.textContent === name).value, PROJECT);
    await page.selectOption('#project-select', first);
    await page.waitForSelector('.session');
  });

  test('the LLM settings form shows presets and never shows a key', async (t) => {
    await page.click('#settings-link');
    await page.waitForSelector('#view-settings:not([hidden])');
    await until(() => document.querySelectorAll('#llm-provider option').length > 1);
    // A preset fills the base URL.
    const providers = await page.$$eval('#llm-provider option', (os) => os.map((o) => o.value));
    const preset = providers.find((p) => p !== 'custom');
    await page.selectOption('#llm-provider', preset);
    assert.notEqual(await page.inputValue('#llm-base-url'), '', `preset ${preset} fills the base URL`);
    assert.equal(await page.getAttribute('#llm-api-key', 'type'), 'password');

    const secret = 'sk-browser-test-9f8e7d6c5b4a';
    await page.fill('#llm-name', 'Browser test model');
    await page.fill('#llm-model', 'gpt-4o-mini');
    await page.fill('#llm-api-key', secret);
    await page.click('#llm-save');
    await page.waitForSelector('#settings-info:not([hidden]), #settings-error:not([hidden])');
    if (await page.isVisible('#settings-error')) {
      // The configuration routes are not served by this build: the page must say so clearly.
      const msg = await page.textContent('#settings-error');
      assert.match(msg, /No such API route/, 'only a missing route may stop this test');
      await shot('15-settings');
      t.diagnostic('LLM configuration routes unavailable: ' + msg);
      return;
    }
    await page.waitForSelector('#llm-rows tr');
    const html = await page.content();
    assert.ok(!html.includes(secret), 'the key is not shown anywhere on the page');
    const masked = await page.textContent('#llm-rows tr .masked-key');
    assert.ok(masked && !masked.includes(secret), `masked key: ${masked}`);
    await shot('15-settings');

    // Edit it (the page sends the version it read) without retyping the key, then make it the default.
    const row = page.locator('#llm-rows tr', { hasText: 'Browser test model' });
    await row.getByRole('button', { name: /Edit/ }).click();
    assert.equal(await page.inputValue('#llm-api-key'), '', 'the key is never put back into the form');
    assert.match(await page.getAttribute('#llm-api-key', 'placeholder'), /unchanged/);
    await page.fill('#llm-model', 'gpt-4.1');
    await page.click('#llm-save');
    await page.waitForSelector('#llm-rows tr >> text=gpt-4.1');
    assert.equal(await page.textContent('#llm-rows tr .masked-key'), masked, 'the stored key was kept');
    await row.getByRole('button', { name: /Make .* default/ }).click();
    await page.waitForSelector('#llm-rows tr .badge >> text=default');
    // Clean up so the server default keeps answering the other tests' turns.
    await page.locator('#llm-rows tr', { hasText: 'Browser test model' }).getByRole('button', { name: /Delete/ }).click();
    await page.click('#confirm-ok');
    await until(() => !document.getElementById('llm-rows').textContent.includes('Browser test model'));
    await page.click('.settings-head a');
    await page.waitForSelector('#chat:not([hidden])');
  });

  test('an expired session goes back to sign-in with an explanation', async () => {
    await page.evaluate(() => sessionStorage.setItem('gns3copilot.token', 'expired-token-0000'));
    await page.reload();
    await page.waitForSelector('#signin-form');
    await page.waitForSelector('#signin-error:not([hidden])');
    assert.match(await page.textContent('#signin-error'), /expired/i);
    await shot('16-session-expired');
    await page.fill('#signin-username', USER);
    await page.fill('#signin-password', PASSWORD);
    await page.click('#signin-submit');
    await page.waitForSelector('#view-app:not([hidden])');
  });

  test('no script errors and no CSP violations happened', () => {
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(cspViolations, []);
  });
});
