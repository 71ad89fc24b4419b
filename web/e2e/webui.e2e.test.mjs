// Browser tests of GNS3's own web UI and its AI panel against the copilot (`serve --proxy-gns3`
// in front of the fake GNS3 serving the build); launched by TestGNS3WebUIPanelInBrowser in web/,
// once per build (COPILOT_WEBUI_BUILD: fork-master-3.0 or upstream-3.1).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { injectFault, openPanel, openSession, readBubbles, readToolCards, readSessions, sendAndWait, viewInjectionInPanel, panelSettings, usePanel } from './webui.mjs';

const settings = panelSettings('TestGNS3WebUIPanelInBrowser');
const { URL, PROJECT, BUILD, ARTIFACTS, skip } = settings;
const panel = usePanel(settings);

// The panel writes a session's updated_at as "Just now", "N minutes ago", … or a date; what it
// cannot parse it writes as "Invalid Date".
const READABLE_TIME = /^(Just now|\d+ minutes ago|\d+ hours ago|\d+ days ago|[A-Z][a-z]{2} \d{1,2}, \d{2}:\d{2} [AP]M)$/;

describe(`GNS3 web UI ${BUILD}: the AI panel`, { skip }, () => {
  test('a question is answered in the panel, and the session list shows a real date', async () => {
    await sendAndWait(panel.page, 'Hello, what is in my lab?');
    const bubbles = await readBubbles(panel.page);
    assert.deepEqual(bubbles.map((b) => b.role), ['user', 'assistant'], JSON.stringify(bubbles));
    assert.match(bubbles[0].text, /Hello, what is in my lab\?/);
    assert.match(bubbles[1].text, /three VPCS nodes/);
    assert.ok(!bubbles[1].error && !bubbles[1].streaming, JSON.stringify(bubbles[1]));
    const sessions = await readSessions(panel.page);
    assert.ok(sessions.length >= 1, 'the new session is listed');
    for (const s of sessions) assert.match(s.time, READABLE_TIME, `session ${JSON.stringify(s)}`);
    await panel.page.screenshot({ path: join(ARTIFACTS, `webui-${BUILD}-01-answer.png`) });
    // Nothing the UI asked of the copilot or of GNS3 behind it broke (a 401 before signing in is
    // the UI finding out that it must).
    assert.deepEqual(panel.browser.failures.filter((f) => /^(5\d\d|404|script error|failed)/.test(f)), []);
  });

  test('the fault dialog injects a fault, and "check" typed in its session is answered', { skip: BUILD !== 'upstream-3.1' && 'the fault dialog is 3.1 only' }, async () => {
    const verdict = await injectFault(panel.page, '1');
    assert.equal(verdict, 'Fault injected successfully!');
    await panel.page.screenshot({ path: join(ARTIFACTS, `webui-${BUILD}-02-injected.png`) });
    await viewInjectionInPanel(panel.page);
    // A student opens that session later: the map again, the panel, the session in its list.
    await openPanel(panel.page, URL, PROJECT);
    const sessions = await readSessions(panel.page);
    const at = sessions.findIndex((s) => s.fault);
    assert.ok(at >= 0, 'the injection session carries the fault icon: ' + JSON.stringify(sessions));
    assert.match(sessions[at].time, READABLE_TIME);
    await openSession(panel.page, at);
    await sendAndWait(panel.page, 'check');
    const bubbles = await readBubbles(panel.page);
    const last = bubbles[bubbles.length - 1];
    assert.equal(last.role, 'assistant', JSON.stringify(bubbles));
    assert.match(last.text, /Not yet/);
    await panel.page.screenshot({ path: join(ARTIFACTS, `webui-${BUILD}-03-check.png`) });
    // A reload shows the question and the answer, from the history.
    await openPanel(panel.page, URL, PROJECT);
    await openSession(panel.page, (await readSessions(panel.page)).findIndex((s) => s.fault));
    const reloaded = await readBubbles(panel.page);
    assert.deepEqual(reloaded.slice(-2).map((b) => b.role), ['user', 'assistant'], JSON.stringify(reloaded));
    assert.match(reloaded[reloaded.length - 2].text, /^check/);
    assert.match(reloaded[reloaded.length - 1].text, /Not yet/);
    // The injection's tools show as ended cards, nothing left spinning, their names only.
    const cards = await readToolCards(panel.page);
    const names = (kind) => cards.filter((c) => c.kind === kind).map((c) => c.name);
    assert.deepEqual(names('call'), ['execute_vpcs_commands', 'record_injected_fault'], JSON.stringify(cards));
    assert.deepEqual(names('result'), names('call'));
    assert.deepEqual(panel.browser.failures.filter((f) => f.startsWith('script error')), []);
  });
});
