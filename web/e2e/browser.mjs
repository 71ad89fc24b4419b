// The one way the browser tests start Chromium: Debian's package (never a downloaded build),
// headless, on a new empty profile directory that is removed afterwards.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** launch returns {context, page, close} on a fresh profile. */
export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'copilot-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 860 },
    colorScheme: 'light',
  });
  const page = context.pages()[0] || (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** signIn fills the sign-in form and waits for the app. */
export async function signIn(page, user, password) {
  await page.waitForSelector('#signin-form');
  await page.fill('#signin-username', user);
  await page.fill('#signin-password', password);
  await page.click('#signin-submit');
  await page.waitForSelector('#view-app:not([hidden])');
}

/**
 * projectOption waits until the project picker lists a project whose label starts with name and
 * resolves with its value. The app is shown before its project list arrives, so reading the
 * picker right after signing in can find it empty.
 */
export async function projectOption(page, name, timeout = 30000) {
  const handle = await page.waitForFunction(
    (n) => [...(document.querySelector('#project-select')?.options || [])].find((o) => o.textContent.startsWith(n))?.value,
    name,
    { timeout, polling: 50 },
  );
  return handle.jsonValue();
}

/**
 * openSignedIn launches Chromium (see launch), records the page's script errors in pageErrors,
 * opens url, signs in and waits for the empty chat; it resolves with launch's {context, page, close}.
 */
export async function openSignedIn(url, user, password, pageErrors) {
  const browser = await launch();
  const { page } = browser;
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  try {
    await page.goto(url + '/');
    await signIn(page, user, password);
    await page.waitForSelector('.empty-state');
  } catch (err) {
    await browser.close(); // the caller never gets it to close
    throw err;
  }
  return browser;
}

/** send types a message in the composer and sends it with Enter. */
export async function send(page, text) {
  await page.fill('#composer-input', text);
  await page.press('#composer-input', 'Enter');
}

/** waitTurnDone waits until the turn shown has ended: Send offered again, no answer streaming. */
export async function waitTurnDone(page, timeout = 60000) {
  await page.waitForSelector('#send:not([hidden])', { timeout });
  await page.waitForSelector('.msg.assistant.streaming', { state: 'detached', timeout });
}
