// The conversation pane: the open session's stored messages (with their approval records and
// its exercise banner), the empty state with suggestions, sending a message, and the notices a
// person can act on when something fails. The running turn itself is liveturn.js.

import { api, describeError } from './api.js';
import { AssistantTurn, noticeBox, renderHistory, userMessage } from './answer.js';
import { restoreApprovals } from './approvals.js';
import { composer, INJECT_MESSAGE, setBusy, wireComposer } from './composer.js';
import { clear, h } from './dom.js';
import { ExerciseBanner } from './exercise.js';
import { clearLive, readLive } from './liverecord.js';
import { detachStream, follow, initLiveTurn, joinRunning, newStream, stopTurn } from './liveturn.js';
import { $, announce, banner, conversationEl, currentProject, retryButton, scrollToEnd, state } from './page.js';
import { openCurrentProject } from './projects.js';
import { loadSessions, markCurrentSession } from './sessions.js';

// The session's troubleshooting exercise, above the conversation.
const exercise = new ExerciseBanner($('exercise'));

/** initConversation connects the composer and the running turn to the pane. */
export function initConversation() {
  wireComposer({ send, stop: stopTurn });
  initLiveTurn({
    reopen: openSession,
    showHistory,
    sessionStarted(id, isNew) {
      setCurrentSession(id);
      // No history is shown for the session this turn opened, so nothing else reads its exercise.
      showExercise(id);
      if (isNew) loadSessions();
    },
    exerciseEvent: (d) => exercise.event(d),
  });
}

/** setConversationProject tells the exercise banner which project its session is in. */
export function setConversationProject(id) {
  exercise.setProject(id);
}

function setCurrentSession(id) {
  if ((id || '') !== state.sessionId) exercise.select(id);
  markCurrentSession(id);
}

/**
 * showExercise shows the session's exercise in the banner. Only a session the list says has one
 * is asked for it (asking any other would be answered 404), and one whose banner an event of
 * this page's turn just filled, which is then read afresh.
 */
function showExercise(id) {
  const s = state.sessions.find((x) => x.thread_id === id);
  if ((s && s.has_exercise) || exercise.shows(id)) exercise.load(id);
  else exercise.select(id);
}

/** showProjectClosed says that the copilot needs the project opened, with the button that opens it. */
export function showProjectClosed(p) {
  clear(conversationEl);
  conversationEl.append(
    noticeBox('info', `“${p.name}” is ${p.status || 'closed'}. The copilot works on opened projects only.`, h('button', { type: 'button', class: 'primary', text: 'Open project', onclick: openCurrentProject })),
  );
}

export function newChat() {
  detachStream();
  setCurrentSession('');
  showEmptyConversation();
  if (location.hash !== '#settings') composer.input.focus({ preventScroll: true });
}

export function showEmptyConversation(text) {
  clear(conversationEl);
  conversationEl.append(
    h(
      'div',
      { class: 'empty-state' },
      h('p', { class: 'empty-title', text: text || 'Ask the copilot about your lab.' }),
      text
        ? null
        : h(
            'ul',
            { class: 'suggestions' },
            ['Show me the topology of this project', 'Which nodes are stopped?', 'Start all the nodes'].map((q) =>
              h('li', {}, h('button', { type: 'button', class: 'suggestion', text: q, onclick: () => { composer.input.value = q; composer.input.focus(); } })),
            ),
          ),
    ),
  );
}

// Each opening of a session gets a number: one that a later click (or a message sent while it
// loaded) overtook gives up instead of drawing over it or joining a second stream.
let opens = 0;

/**
 * openSession shows a session's stored messages and, when the service says a turn is running
 * in it, joins that turn. listed: the sessions were just read, so their running flags are fresh.
 */
export async function openSession(id, { listed = false } = {}) {
  detachStream();
  setCurrentSession(id);
  const gen = ++opens;
  const current = () => gen === opens && state.sessionId === id && !state.stream;
  clear(conversationEl);
  conversationEl.append(h('p', { class: 'muted loading', text: 'Loading the conversation…' }));
  if (!listed) {
    const ok = await loadSessions();
    if (!current()) return;
    if (!ok) {
      for (const p of conversationEl.querySelectorAll('.loading')) p.remove();
      return;
    }
  }
  const session = state.sessions.find((s) => s.thread_id === id);
  const live = readLive();
  const record = live && live.projectId === state.projectId && live.sessionId === id ? live : null;
  if (session && session.running) {
    await joinRunning(id, record, current);
    return;
  }
  // Nothing runs here: a record of this session's turn is about a turn that is over and stored.
  if (record) clearLive();
  await showHistory(id);
}

/** showHistory renders a session's stored messages; it returns how many, or null on failure. */
async function showHistory(id) {
  let hist;
  try {
    hist = await api.history(state.projectId, id);
  } catch (err) {
    if (state.sessionId !== id || state.stream) return null;
    clear(conversationEl);
    if (err.status === 404) {
      conversationEl.append(noticeBox('info', 'This conversation no longer exists.'));
      setCurrentSession('');
      await loadSessions();
    } else if (err.kind !== 'expired') {
      showApiError(err, () => openSession(id));
    }
    return null;
  }
  // A message sent while the history loaded has the conversation now; its turn reloads it.
  if (state.sessionId !== id || state.stream) return null;
  clear(conversationEl);
  const messages = (hist && hist.messages) || [];
  conversationEl.append(...renderHistory(messages));
  if (!messages.length) showEmptyConversation();
  restoreApprovals(conversationEl, id);
  showExercise(id);
  scrollToEnd(true);
  return messages.length;
}

async function send(textArg, inject = false) {
  const text = (textArg ?? composer.input.value).trim() || (inject ? INJECT_MESSAGE : '');
  if (!text) return;
  if (state.stream) {
    announce('The copilot is still answering; wait for it or press Stop.');
    return;
  }
  const p = currentProject();
  if (!p || p.status !== 'opened') {
    banner('Open the project first: the copilot works on opened projects only.');
    return;
  }
  detachStream();
  banner('');
  // Sent while the conversation was still loading: its stored part is shown once this turn ends.
  const loading = !!conversationEl.querySelector('.loading');
  for (const p of conversationEl.querySelectorAll('.loading')) p.remove();
  if (conversationEl.querySelector('.empty-state')) clear(conversationEl);
  // A new attempt replaces the notices of earlier attempts that failed.
  for (const n of conversationEl.querySelectorAll('.notice[data-message]')) n.remove();
  const userEl = userMessage(text);
  const turn = new AssistantTurn();
  conversationEl.append(userEl, turn.el);
  turn.setStreaming(true);
  composer.input.value = '';
  scrollToEnd(true);

  const ctx = newStream({ turn, userEl, sessionId: state.sessionId, reloadHistory: loading });
  ctx.live = { projectId: state.projectId, sessionId: state.sessionId, turnId: '', message: text, lastEventId: '', events: [] };
  setBusy(true);
  announce('Message sent. The copilot is answering.');
  let res;
  try {
    res = await (inject ? api.inject : api.stream)(state.projectId, { message: text, session_id: state.sessionId || undefined, stream: true, mode: 'text' }, ctx.controller.signal);
  } catch (err) {
    if (ctx !== state.stream) return;
    state.stream = null;
    setBusy(false);
    userEl.remove();
    turn.el.remove();
    // Nothing was saved: give the message back so it is not lost.
    if (!composer.input.value) composer.input.value = text;
    if (err.name !== 'AbortError' && err.kind !== 'expired') showApiError(err, () => send(text), text);
    return;
  }
  await follow(ctx, res);
}

export function showApiError(err, retry, text) {
  const actions = [];
  if (err.kind === 'no-llm') actions.push(h('a', { href: '#settings', class: 'button-link', text: 'Open LLM settings' }));
  else if (err.kind === 'project-closed') actions.push(h('button', { type: 'button', class: 'primary', text: 'Open project', onclick: () => openCurrentProject() }));
  else if (err.status === 409 && state.sessionId) actions.push(h('button', { type: 'button', text: 'Follow the running answer', onclick: () => openSession(state.sessionId) }));
  else if (retry && (err.kind === 'gns3-down' || err.kind === 'network' || err.status >= 500)) actions.push(retryButton(retry));
  const box = noticeBox('error', describeError(err), ...actions);
  if (err.kind === 'no-llm' && err.message && err.message !== describeError(err)) box.append(h('details', { class: 'small' }, h('summary', { text: 'Details' }), h('p', { text: err.message })));
  if (text) box.dataset.message = text;
  conversationEl.append(box);
  scrollToEnd(true);
}
