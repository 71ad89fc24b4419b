// Driving GNS3's own web UI (a production build from shared/gns3-web-ui/, served by the fake GNS3
// behind `serve --proxy-gns3`) and its AI chat panel, the client the chat contract is written
// for. The selectors and the panel's habits are those of shared/gns3-web-ui/README.md. Tests of
// the panel build on these helpers; none of them knows which build it drives, except where the
// builds differ (the fault-injection dialog exists only in 3.1).

import { after, before } from 'node:test';
import { mkdirSync } from 'node:fs';
import { launch } from './browser.mjs';

/**
 * panelSettings reads what the Go test that launches a browser test file passes: the copilot's
 * URL, the user, the project and the build. skip says why the file cannot run on its own.
 */
export function panelSettings(goTest) {
  const s = {
    URL: process.env.COPILOT_URL,
    USER: process.env.COPILOT_USER || 'alice',
    PASSWORD: process.env.COPILOT_PASSWORD || 'alice-password',
    PROJECT: process.env.COPILOT_PROJECT_ID || '',
    BUILD: process.env.COPILOT_WEBUI_BUILD || '',
    ARTIFACTS: process.env.COPILOT_ARTIFACTS || new globalThis.URL('./artifacts/', import.meta.url).pathname,
  };
  s.skip = s.URL && s.PROJECT && s.BUILD ? false : `COPILOT_URL is not set: run these through \`go test ./web -run ${goTest}\``;
  return s;
}

/**
 * usePanel signs in before the file's tests and opens the panel on the project, and closes the
 * browser after them (nothing when the settings say skip); the returned object's browser and
 * page are set once the tests run.
 */
export function usePanel(s) {
  const held = {};
  if (s.skip) return held;
  before(async () => {
    mkdirSync(s.ARTIFACTS, { recursive: true });
    held.browser = await openPanelAs(s.URL, s.USER, s.PASSWORD, s.PROJECT);
    held.page = held.browser.page;
  });
  after(async () => {
    if (held.browser) await held.browser.close();
  });
  return held;
}

const PANEL = 'app-ai-chat .gns3-ai-chat';
const INPUT = 'textarea.gns3-chat-input-area__textarea';
const SEND = 'button.gns3-chat-input-area__send-button';
const SIDEBAR_TITLE = '.gns3-ai-chat__sidebar-title';
const SESSION = '.gns3-chat-session-list__session';

/**
 * openWebUI launches Chromium on a fresh profile and signs in to the web UI at base as user; it
 * resolves with launch's {context, page, close} plus `failures`: every request the UI made that
 * was answered 4xx/5xx or failed, and every script error, for a test to show or assert on.
 */
export async function openWebUI(base, user, password) {
  const browser = await launch();
  const { page, context } = browser;
  const failures = [];
  browser.failures = failures;
  page.on('pageerror', (err) => failures.push('script error: ' + String(err)));
  page.on('response', (res) => {
    if (res.status() >= 400) failures.push(`${res.status()} ${res.request().method()} ${new URL(res.url()).pathname}`);
  });
  page.on('requestfailed', (req) => {
    // Requests still running when the test navigates are cancelled by the browser, not failed.
    const why = req.failure()?.errorText || '';
    if (why !== 'net::ERR_ABORTED') failures.push(`failed ${req.method()} ${new URL(req.url()).pathname}: ${why}`);
  });
  try {
    // Without this the UI asks for consent to load analytics before anything else.
    await context.addInitScript(() => localStorage.setItem('statistics_command', 'false'));
    await page.goto(base + '/static/web-ui/bundled');
    await page.fill('input[formcontrolname=username]', user);
    await page.fill('input[formcontrolname=password]', password);
    await page.click('button[type=submit]');
    // Signed in: the UI leaves the login page for the projects list.
    await page.waitForURL((u) => !/login/.test(u.pathname), { timeout: 30000 });
  } catch (err) {
    await browser.close();
    throw new Error(`signing in to the web UI failed: ${err.message}\nrequests that failed: ${failures.join('\n')}`);
  }
  return browser;
}

/**
 * openPanel opens project projectId's map (directly by URL: 3.1's project list scrolls virtually)
 * and the AI chat panel on it, and waits until its input takes text.
 */
export async function openPanel(page, base, projectId) {
  await page.goto(`${base}/static/web-ui/controller/1/project/${projectId}`);
  await page.waitForSelector('button.ai-chat-button', { timeout: 30000 });
  await page.click('button.ai-chat-button');
  await page.waitForSelector(PANEL, { timeout: 15000 });
  await page.waitForSelector(`${INPUT}:not([disabled])`, { timeout: 15000 });
}

/**
 * openPanelAs does both: a browser signed in as user, on project projectId with the panel open.
 * It resolves with openWebUI's browser.
 */
export async function openPanelAs(base, user, password, projectId) {
  const browser = await openWebUI(base, user, password);
  try {
    await openPanel(browser.page, base, projectId);
  } catch (err) {
    const failures = browser.failures.join('\n');
    await browser.close();
    throw new Error(`opening the AI panel failed: ${err.message}\nrequests that failed: ${failures}`);
  }
  return browser;
}

/**
 * showPanel restores the panel when it is minimised: the map's AI button toggles it, and the
 * fault dialog's "View in AI Chat" does the same to a panel that was open already.
 */
export async function showPanel(page) {
  if (await page.$('.gns3-ai-chat--minimized')) await page.click('button.ai-chat-button');
  await page.waitForSelector(PANEL, { state: 'visible', timeout: 15000 });
}

/** newChat starts a new conversation in the panel. */
export async function newChat(page) {
  await page.click('.gns3-ai-chat__new-chat-btn');
  await page.waitForSelector(`${INPUT}:not([disabled])`);
}

/**
 * sendText types text with real input events and sends it with Ctrl+Enter (setting .value would
 * send an empty message). It returns once the panel shows the message; the panel disables its
 * input in the same update, which a quick reply may end before anyone sees it.
 */
export async function sendText(page, text) {
  const users = '.gns3-chat-message-list__bubble--user';
  const before = await page.locator(users).count();
  await page.fill(INPUT, text);
  await page.press(INPUT, 'Control+Enter');
  await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length > n, [users, before], { timeout: 10000 });
}

/**
 * waitInputEnabled waits until the panel's input is enabled again, which it is only when the
 * reply's stream has ended (done, error, or the body closing).
 */
export async function waitInputEnabled(page, timeout = 60000) {
  await page.waitForSelector(`${INPUT}:not([disabled])`, { timeout });
}

/** sendAndWait sends text and waits for the end of the reply's stream. */
export async function sendAndWait(page, text, timeout = 60000) {
  await sendText(page, text);
  await waitInputEnabled(page, timeout);
}

/**
 * readBubbles returns the conversation shown: [{role: 'user'|'assistant', text, error,
 * streaming}] in order, text as the panel renders it.
 */
export async function readBubbles(page) {
  return page.$$eval('.gns3-ai-chat__messages [class*="gns3-chat-message-list__bubble--"]', (els) =>
    els
      .filter((el) => /--(user|assistant)\b/.test(el.className))
      .map((el) => ({
        role: /--user\b/.test(el.className) ? 'user' : 'assistant',
        text: el.textContent.replace(/\s+/g, ' ').trim(),
        error: /--error\b/.test(el.className),
        streaming: /--streaming\b/.test(el.className),
      })),
  );
}

/**
 * readToolCards returns the tool cards shown, in order: {kind: 'call' | 'result', name}. The
 * panel draws a call when it starts and its result when tool_end comes; a call without a result
 * is a card that still spins.
 */
export async function readToolCards(page) {
  return page.$$eval('.gns3-chat-message-list__tool-call, .gns3-chat-message-list__tool-result', (els) =>
    els.map((el) => ({
      kind: el.classList.contains('gns3-chat-message-list__tool-call') ? 'call' : 'result',
      name: (el.querySelector('.gns3-chat-message-list__tool-name-text')?.textContent || el.textContent).trim(),
    })),
  );
}

/** showSessions expands the (collapsed) sessions sidebar once. */
export async function showSessions(page) {
  if (!(await page.$(SESSION))) {
    await page.click(SIDEBAR_TITLE);
    await page.waitForSelector(SESSION, { timeout: 10000 });
  }
}

/**
 * readSessions returns the sessions sidebar as shown: [{title, time, fault}] in its order; time
 * is the text the panel made of updated_at, fault whether the session carries the
 * fault-injection icon (3.1).
 */
export async function readSessions(page) {
  await showSessions(page);
  return page.$$eval(SESSION, (els) =>
    els.map((el) => ({
      title: (el.querySelector('.gns3-chat-session-list__title')?.textContent || '').replace(/\s+/g, ' ').trim(),
      time: (el.querySelector('.gns3-chat-session-list__time')?.textContent || '').trim(),
      fault: !!el.querySelector('.gns3-chat-session-list__fault-icon'),
    })),
  );
}

/**
 * openSession opens the session at index in the sidebar's order (readSessions' order), and waits
 * for its history.
 */
export async function openSession(page, index) {
  await showSessions(page);
  await page.locator(SESSION).nth(index).click();
  await page.waitForSelector('.gns3-chat-message-list__bubble--user', { timeout: 10000 });
  await waitInputEnabled(page, 10000);
}

/**
 * injectFault uses 3.1's fault-injection dialog: "Inject Fault", the number of faults in the
 * confirmation that follows, "Confirm & Inject"; then it waits for the dialog's verdict, which it
 * returns ("Fault injected successfully!", or what the dialog shows on failure).
 */
export async function injectFault(page, count = '1', timeout = 90000) {
  const dialog = '.fault-injection-dialog-panel';
  await page.click('button.fault-inject-button');
  await page.waitForSelector(dialog);
  await page.click(`${dialog} button:has-text("Inject Fault")`);
  await page.click(`${dialog} .fault-type-selector__group mat-button-toggle:has-text(${JSON.stringify(count)})`);
  await page.click(`${dialog} button[color=warn]:has-text("Confirm")`);
  const verdict = page.locator(dialog).getByText(/Fault injected successfully!|Failed to inject fault/);
  await verdict.waitFor({ timeout });
  return (await verdict.textContent()).trim();
}

/**
 * viewInjectionInPanel clicks the fault dialog's "View in AI Chat", which closes the dialog and
 * toggles the panel (it selects no session), and makes sure the panel shows.
 */
export async function viewInjectionInPanel(page) {
  await page.click('.fault-injection-dialog-panel button:has-text("View in AI Chat")');
  await page.waitForSelector('.fault-injection-dialog-panel', { state: 'detached' });
  await showPanel(page);
}

/** SEND_BUTTON is the panel's send button, which turns into Abort while a reply streams. */
export const SEND_BUTTON = SEND;
