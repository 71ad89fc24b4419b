// The running turn: its answer streaming in, followed until its last event, rejoined after a
// dropped connection or a reload without missing or repeating anything (liverecord.js keeps
// what this tab saw of it), and stopped on request.

import { api, classify } from './api.js';
import { AssistantTurn, noticeBox, userMessage } from './answer.js';
import { composer, setBusy, setComposerEnabled, setStopping } from './composer.js';
import { clear, h } from './dom.js';
import { clearLive, persistLive, recordLive } from './liverecord.js';
import { announce, banner, conversationEl, currentProject, scrollToEnd, sleep, state } from './page.js';
import { loadSessions } from './sessions.js';
import { readEvents } from './sse.js';

// What the turn needs of the conversation around it; see initLiveTurn.
let pane = null;

/**
 * initLiveTurn connects the running turn to the conversation: reopen(id) shows a session afresh
 * (history and running turn), showHistory(id) its stored messages, sessionStarted(id, isNew) is
 * told the session a turn runs in once the service names it, and exerciseEvent(d) gets the
 * turn's exercise events.
 */
export function initLiveTurn(given) {
  pane = given;
}

/** newStream makes a new connection record (props over the defaults) the page's running turn. */
export function newStream(props) {
  const ctx = { controller: new AbortController(), lastEventId: '', turnId: '', expectTurn: '', userEl: null, live: null, persistTimer: 0, ...props };
  state.stream = ctx;
  return ctx;
}

/** detachStream stops reading the current turn's events; the turn itself goes on. */
export function detachStream() {
  const ctx = state.stream;
  if (!ctx) return;
  state.stream = null;
  if (ctx.live) persistLive(ctx);
  ctx.controller.abort();
  if (ctx.turn) ctx.turn.setStreaming(false);
  setBusy(false);
  setComposerEnabled(!!(currentProject() && currentProject().status === 'opened'));
}

/**
 * follow reads a turn's events until its terminal event, rejoining after a dropped connection
 * with the last event id so nothing is missed or shown twice.
 */
export async function follow(ctx, res) {
  let attempts = 0;
  for (;;) {
    let terminal = false;
    let got = false;
    try {
      await readEvents(res, (ev) => {
        if (ctx !== state.stream || terminal) return;
        got = true;
        if (onEvent(ctx, ev)) terminal = true;
      });
    } catch {
      if (ctx.controller.signal.aborted && !ctx.stale) return 'detached';
    }
    if (ctx !== state.stream) return 'detached';
    if (ctx.stale) {
      // The saved record was of an earlier turn, which is stored by now: start over from the
      // history and the running turn's own beginning.
      state.stream = null;
      clearLive();
      await pane.reopen(ctx.sessionId);
      return 'restarted';
    }
    if (terminal) {
      await endTurn(ctx);
      return 'terminal';
    }
    // The connection dropped mid-turn: rejoin after the last event seen, backing off while
    // the service cannot be reached. A connection that delivered events earns fresh attempts.
    if (got) attempts = 0;
    let next = null;
    while (!next) {
      if (!ctx.sessionId || attempts >= 6) {
        lostConnection(ctx);
        return 'lost';
      }
      await sleep(Math.min(4000, 300 * 2 ** attempts));
      attempts++;
      if (ctx !== state.stream) return 'detached';
      try {
        next = await api.join(state.projectId, ctx.sessionId, ctx.lastEventId, ctx.controller.signal);
      } catch (err) {
        if (ctx !== state.stream || err.kind === 'expired' || err.name === 'AbortError') return 'detached';
        if (err.status !== 0 && err.status < 500) {
          lostConnection(ctx, err.message);
          return 'lost';
        }
      }
    }
    res = next;
    if (res.status === 204) {
      // The turn's events are gone (expired): the stored history is all there is.
      state.stream = null;
      clearLive();
      setBusy(false);
      await pane.showHistory(ctx.sessionId);
      return 'gone';
    }
  }
}

function lostConnection(ctx, why = '') {
  ctx.turn.finish();
  state.stream = null;
  setBusy(false);
  if (ctx.live) persistLive(ctx);
  conversationEl.append(
    noticeBox('error', 'The connection to the copilot was lost. The turn goes on in the background. ' + why, h('button', { type: 'button', text: 'Rejoin', onclick: () => pane.reopen(ctx.sessionId) })),
  );
}

function onEvent(ctx, ev) {
  let d;
  try {
    d = JSON.parse(ev.data);
  } catch {
    return false;
  }
  const type = d.type || ev.event;
  if (ev.id) ctx.lastEventId = ev.id;
  if (type === 'heartbeat') return false;
  if (type === 'turn_started') {
    if (ctx.expectTurn && d.turn_id && d.turn_id !== ctx.expectTurn) {
      ctx.stale = true;
      ctx.controller.abort();
      return true;
    }
    ctx.turnId = d.turn_id || ctx.turnId;
    if (!ctx.userEl && typeof d.message === 'string' && d.message) {
      // Joined a turn whose question this page has not shown: the event carries it.
      ctx.userEl = userMessage(d.message);
      ctx.turn.el.before(ctx.userEl);
      if (ctx.live) ctx.live.message = d.message;
    }
    if (d.session_id && d.session_id !== ctx.sessionId) {
      const isNew = !ctx.sessionId;
      ctx.sessionId = d.session_id;
      if (ctx.live) ctx.live.sessionId = d.session_id;
      pane.sessionStarted(d.session_id, isNew);
    }
    if (ctx.live) ctx.live.turnId = ctx.turnId;
    composer.stop.disabled = false;
  }
  if (ctx.live) recordLive(ctx, type, d, ev.id);
  if (type === 'exercise_started' || type === 'exercise_checked') pane.exerciseEvent(d);
  const terminal = ctx.turn.handle(type, d, ev.id);
  if (type === 'error') addErrorActions(ctx.turn, d.error || '');
  scrollToEnd();
  return terminal;
}

function addErrorActions(turn, message) {
  if (classify(500, message) === 'no-llm' || /api key|llm|model|provider|base url/i.test(message)) {
    turn.body.append(h('p', { class: 'notice-actions' }, h('a', { href: '#settings', text: 'Check your LLM settings' })));
  }
}

async function endTurn(ctx) {
  state.stream = null;
  clearTimeout(ctx.persistTimer);
  clearLive();
  setBusy(false);
  setComposerEnabled(true);
  announce('The copilot has finished answering.');
  if (ctx.reloadHistory) await pane.showHistory(ctx.sessionId);
  await loadSessions();
  scrollToEnd();
}

export async function stopTurn() {
  const ctx = state.stream;
  if (!ctx || !ctx.sessionId) return;
  setStopping(true);
  try {
    await api.abort(state.projectId, ctx.sessionId);
    announce('Stopping the copilot.');
  } catch (err) {
    if (err.status === 409) return; // the turn ended on its own meanwhile
    if (err.kind !== 'expired') banner('Stopping failed: ' + err.message);
    setStopping(false);
  }
}

/**
 * joinRunning shows a session whose turn the service says is running: the stored history, then
 * the turn itself. With this tab's record of that turn (kept across a reload) it shows what it
 * had at once and asks only for what came after its last event id; without one it follows the
 * turn from its start, whose turn_started event carries the question.
 */
export async function joinRunning(sessionId, record, current) {
  const usable = record && record.message && record.lastEventId && !record.events.some((e) => e[0] === 'done' || e[0] === 'error');
  const live = usable ? record : { projectId: state.projectId, sessionId, turnId: '', message: '', lastEventId: '', events: [] };
  const shown = await pane.showHistory(sessionId);
  if (shown === null || !current()) return;
  if (conversationEl.querySelector('.empty-state')) clear(conversationEl);
  const userEl = live.message ? userMessage(live.message) : null;
  let turn = new AssistantTurn();
  if (userEl) conversationEl.append(userEl);
  conversationEl.append(turn.el);
  turn.setStreaming(true);
  for (const [type, d, id] of live.events) turn.handle(type, d, id);
  const ctx = newStream({ turn, userEl, sessionId, turnId: live.turnId, expectTurn: live.turnId, lastEventId: live.lastEventId, reloadHistory: true });
  ctx.live = live;
  setBusy(true);
  announce(usable ? 'Rejoined the running answer.' : 'Following the running answer.');
  scrollToEnd(true);
  let res;
  try {
    res = await api.join(state.projectId, sessionId, ctx.lastEventId, ctx.controller.signal);
  } catch (err) {
    if (ctx !== state.stream) return;
    if (err.status === 400 && ctx.lastEventId) {
      // The log no longer knows that id: replay the whole turn instead, under the same question.
      turn.el.remove();
      turn = new AssistantTurn();
      conversationEl.append(turn.el);
      turn.setStreaming(true);
      ctx.turn = turn;
      ctx.lastEventId = '';
      live.events = [];
      live.lastEventId = '';
      try {
        res = await api.join(state.projectId, sessionId, '', ctx.controller.signal);
      } catch (err2) {
        if (ctx === state.stream && err2.kind !== 'expired' && err2.name !== 'AbortError') lostConnection(ctx, err2.message);
        return;
      }
    } else {
      if (err.kind !== 'expired' && err.name !== 'AbortError') lostConnection(ctx, err.message);
      return;
    }
  }
  if (ctx !== state.stream) return;
  if (res.status === 204) {
    // The turn's events are gone (it ended and they expired): the stored history is all there is.
    state.stream = null;
    clearLive();
    setBusy(false);
    setComposerEnabled(true);
    await pane.showHistory(sessionId);
    return;
  }
  await follow(ctx, res);
}

