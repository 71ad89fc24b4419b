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
