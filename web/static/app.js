// The chat page: sign-in, project picker, sessions sidebar, the conversation with its live turn,
// and the LLM settings view. State that must survive a reload (token, chosen project and
// session, the running turn's events and last event id) lives in sessionStorage, per tab.

import { api, ApiError, classify, setExpiredHandler, setToken, token } from './api.js';
import { restoreApprovals, setApprovalProject, watchPendingApprovals } from './approvals.js';
import { AssistantTurn, noticeBox, renderHistory, userMessage } from './conversation.js';
import { clear, formatCount, h, relativeTime } from './dom.js';
import { ExerciseBanner } from './exercise.js';
import { exportMenu } from './exportmenu.js';
import { icon } from './icons.js';
import { initSettings, showSettings } from './settings.js';
import { readEvents } from './sse.js';
import { TopologyPanel } from './topology.js';

const KEYS = {
  project: 'gns3copilot.project',
  session: 'gns3copilot.session',
  live: 'gns3copilot.live',
};

const $ = (id) => document.getElementById(id);
const el = {
  boot: $('boot'),
  signin: $('view-signin'),
  signinForm: $('signin-form'),
  signinError: $('signin-error'),
  app: $('view-app'),
  banner: $('banner'),
  projectSelect: $('project-select'),
  projectStatus: $('project-status'),
  projectOpen: $('project-open'),
  userName: $('user-name'),
  signout: $('signout'),
  sidebar: $('sidebar'),
  newChat: $('new-chat'),
  sessionList: $('session-list'),
  sessionsEmpty: $('sessions-empty'),
  chat: $('chat'),
  chatTitle: $('chat-title'),
  conversation: $('conversation'),
  chatStatus: $('chat-status'),
  composer: $('composer'),
  input: $('composer-input'),
  send: $('send'),
  stop: $('stop'),
  inject: $('inject'),
  settings: $('view-settings'),
  confirm: $('confirm-dialog'),
  confirmText: $('confirm-text'),
  confirmOk: $('confirm-ok'),
};

const topology = new TopologyPanel($('topology'), el.conversation);

const state = {
  user: null,
  projects: [],
  projectId: sessionStorage.getItem(KEYS.project) || '',
  sessions: [],
  sessionId: sessionStorage.getItem(KEYS.session) || '',
  stream: null, // the connection to a running turn's events: {controller, turn, userEl, sessionId, lastEventId, live}
  renaming: '',
};

// ---------------------------------------------------------------------------------------------
// Views

function show(view) {
  el.boot.hidden = true;
  el.signin.hidden = view !== 'signin';
  el.app.hidden = view !== 'app';
}

function showSignIn(message = '') {
  detachStream();
  show('signin');
  el.signinError.hidden = !message;
  el.signinError.textContent = message;
  document.title = 'Sign in — GNS3 Copilot';
  $('signin-username').focus();
}

function banner(message, ...actions) {
  clear(el.banner);
  if (!message) {
    el.banner.hidden = true;
    return;
  }
  el.banner.append(h('span', { text: message }), ...actions);
  el.banner.hidden = false;
}

function announce(text) {
  el.chatStatus.textContent = text;
}

function route() {
  const settings = location.hash === '#settings';
  el.settings.hidden = !settings;
  el.chat.hidden = settings;
  el.sidebar.hidden = settings;
  if (settings && state.user) showSettings();
  if (!settings && !el.app.hidden) el.input.focus({ preventScroll: true });
}

// ---------------------------------------------------------------------------------------------
// Sign-in

el.signinForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const username = $('signin-username').value.trim();
  const password = $('signin-password').value;
  if (!username || !password) {
    el.signinError.textContent = 'Enter your GNS3 username and password.';
    el.signinError.hidden = false;
    return;
  }
  const submit = $('signin-submit');
  submit.disabled = true;
  submit.textContent = 'Signing in…';
  try {
    const res = await api.signIn(username, password);
    if (!res || !res.access_token) throw new ApiError(502, 'GNS3 did not return a token.', 'other');
    setToken(res.access_token);
    $('signin-password').value = '';
    await enterApp();
  } catch (err) {
    let msg = err.message;
    if (err.status === 401) msg = 'Wrong username or password.';
    else if (err.kind === 'gns3-down') msg = 'The GNS3 server cannot be reached right now. Check that it is running, then try again.';
    el.signinError.textContent = msg;
    el.signinError.hidden = false;
  } finally {
    submit.disabled = false;
    submit.textContent = 'Sign in';
  }
});

el.signout.addEventListener('click', () => {
  detachStream();
  topology.follow('');
  setToken('');
  for (const k of Object.values(KEYS)) sessionStorage.removeItem(k);
  state.user = null;
  state.sessionId = '';
  state.projectId = '';
  showSignIn();
});

setExpiredHandler(() => {
  // The running turn's record is kept: after signing in again the page rejoins it.
  setToken('');
  state.user = null;
  topology.follow('');
  showSignIn('Your GNS3 session has expired. Sign in again to continue.');
});

async function enterApp() {
  state.user = await api.me();
  show('app');
  el.userName.textContent = state.user.username || '';
  banner('');
  initSettings({ user: () => state.user, onChanged: () => {} });
  route();
  await loadProjects();
  // Approvals asked outside the open conversation (MCP agents, other chats) wait here.
  if (!stopPending) stopPending = watchPendingApprovals($('pending-approvals'));
}

let stopPending = null;

// ---------------------------------------------------------------------------------------------
// Projects

async function loadProjects(preferId = '') {
  let list;
  try {
    list = await api.projects();
  } catch (err) {
    if (err.kind === 'expired') return;
    banner(describe(err), retryButton(() => loadProjects(preferId)));
    return;
  }
  state.projects = Array.isArray(list) ? list : [];
  clear(el.projectSelect);
  if (!state.projects.length) {
    el.projectSelect.append(h('option', { value: '', text: 'No projects' }));
    el.projectSelect.disabled = true;
    selectProject('');
    return;
  }
  el.projectSelect.disabled = false;
  const opened = state.projects.filter((p) => p.status === 'opened');
  const others = state.projects.filter((p) => p.status !== 'opened');
  const group = (label, items) =>
    items.length
      ? h('optgroup', { label }, items.map((p) => h('option', { value: p.project_id, text: p.status === 'opened' ? p.name : `${p.name} (${p.status || 'closed'})` })))
      : null;
  for (const g of [group('Opened', opened), group('Closed', others)]) if (g) el.projectSelect.append(g);
  const want = preferId || state.projectId;
  const chosen = state.projects.find((p) => p.project_id === want) || opened[0] || state.projects[0];
  el.projectSelect.value = chosen.project_id;
  await selectProject(chosen.project_id);
}

function currentProject() {
  return state.projects.find((p) => p.project_id === state.projectId) || null;
}

el.projectSelect.addEventListener('change', () => {
  state.sessionId = '';
  sessionStorage.removeItem(KEYS.session);
  selectProject(el.projectSelect.value);
});

el.projectOpen.addEventListener('click', () => openCurrentProject());

async function openCurrentProject() {
  const p = currentProject();
  if (!p) return;
  el.projectOpen.disabled = true;
  el.projectOpen.textContent = 'Opening…';
  try {
    await api.openProject(p.project_id);
    await loadProjects(p.project_id);
  } catch (err) {
    if (err.kind !== 'expired') banner('Opening the project failed: ' + err.message);
  } finally {
    el.projectOpen.disabled = false;
    el.projectOpen.textContent = 'Open project';
  }
}

async function selectProject(id) {
  detachStream();
  const changed = id !== state.projectId;
  state.projectId = id;
  setApprovalProject(id);
  exercise.setProject(id);
  if (id) sessionStorage.setItem(KEYS.project, id);
  if (changed) {
    state.sessionId = '';
    sessionStorage.removeItem(KEYS.session);
  }
  const p = currentProject();
  const opened = p && p.status === 'opened';
  el.projectStatus.textContent = p ? (opened ? 'opened' : p.status || 'closed') : '';
  el.projectStatus.dataset.status = p ? p.status : '';
  el.projectOpen.hidden = !p || opened;
  el.newChat.disabled = !opened;
  setComposerEnabled(!!opened);
  topology.follow(opened ? id : '');
  clear(el.sessionList);
  state.sessions = [];
  if (!p) {
    showEmptyConversation('There is no project yet. Create one in GNS3, then reload this page.');
    return;
  }
  if (!opened) {
    el.sessionsEmpty.hidden = false;
    el.sessionsEmpty.textContent = 'Open the project to see its conversations.';
    el.chatTitle.textContent = p.name;
    clear(el.conversation);
    el.conversation.append(
      noticeBox('info', `“${p.name}” is ${p.status || 'closed'}. The copilot works on opened projects only.`, h('button', { type: 'button', class: 'primary', text: 'Open project', onclick: openCurrentProject })),
    );
    return;
  }
  if (!(await loadSessions())) return;
  const live = readLive();
  if (live && live.projectId === id && !state.sessions.some((s) => s.thread_id === live.sessionId)) clearLive();
  if (state.sessionId && state.sessions.some((s) => s.thread_id === state.sessionId)) {
    await openSession(state.sessionId, { listed: true });
  } else {
    newChat();
  }
}

// ---------------------------------------------------------------------------------------------
// Sessions sidebar

/** loadSessions reads the project's sessions (with whether a turn runs in each); false on failure. */
async function loadSessions() {
  if (!state.projectId) return false;
  const projectId = state.projectId;
  try {
    const list = await api.sessions(projectId);
    if (projectId !== state.projectId) return false;
    state.sessions = Array.isArray(list) ? list : [];
  } catch (err) {
    if (err.kind !== 'expired' && projectId === state.projectId) showApiError(err, () => selectProject(projectId));
    return false;
  }
  renderSessions();
  return true;
}

function sessionStats(s) {
  const msgs = s.message_count || 0;
  const calls = s.llm_calls_count || 0;
  return `${msgs} message${msgs === 1 ? '' : 's'} · ${calls} LLM call${calls === 1 ? '' : 's'} · ${formatCount(s.total_tokens)} tokens`;
}

// Each render of the list gets a number, so an inline rename box that a re-render removed
// (a turn finishing elsewhere refreshes the list) cannot save half-typed text on its way out.
let sessionsRender = 0;

function renderSessions() {
  sessionsRender++;
  const typing = el.sessionList.querySelector('.rename-input');
  const draft = typing ? typing.value : null;
  // A refresh (opening a session reads the list again) must not take the keyboard focus away.
  const focused = document.activeElement;
  const focusedLi = focused && focused !== typing && focused.closest ? focused.closest('li[data-session-id]') : null;
  const refocus = focusedLi && el.sessionList.contains(focusedLi) ? { id: focusedLi.dataset.sessionId, action: focused.dataset.action || '' } : null;
  clear(el.sessionList);
  el.sessionsEmpty.hidden = state.sessions.length > 0;
  el.sessionsEmpty.textContent = 'No conversations yet.';
  for (const s of state.sessions) {
    const active = s.thread_id === state.sessionId;
    const title = s.title || 'New Conversation';
    const li = h('li', { class: 'session' + (active ? ' active' : '') + (s.pinned ? ' pinned' : ''), dataset: { sessionId: s.thread_id } });
    if (state.renaming === s.thread_id) {
      li.append(renameForm(s, draft));
    } else {
      li.append(
        h(
          'button',
          { type: 'button', class: 'session-select', 'aria-current': active ? 'true' : null, onclick: () => openSession(s.thread_id) },
          h('span', { class: 'session-title' }, s.pinned ? h('span', { class: 'pin-mark', title: 'Pinned' }, icon('pin', 12), h('span', { class: 'visually-hidden', text: 'Pinned: ' })) : null, h('span', { text: title })),
          h('span', { class: 'session-stats', text: sessionStats(s) }),
          h('span', { class: 'session-time', text: relativeTime(s.updated_at) }),
        ),
      );
    }
    li.append(
      h(
        'div',
        { class: 'session-actions' },
        h('button', { type: 'button', class: 'icon-button', 'aria-pressed': s.pinned ? 'true' : 'false', 'aria-label': (s.pinned ? 'Unpin ' : 'Pin ') + title, title: s.pinned ? 'Unpin' : 'Pin', dataset: { action: 'pin' }, onclick: () => togglePin(s) }, icon('pin')),
        h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Rename ' + title, title: 'Rename', dataset: { action: 'rename' }, onclick: () => startRename(s) }, icon('pencil')),
        exportMenu(s, state.projectId, (msg) => banner(msg)),
        h('button', { type: 'button', class: 'icon-button danger-hover', 'aria-label': 'Delete ' + title, title: 'Delete', dataset: { action: 'delete' }, onclick: () => confirmDelete(s) }, icon('trash')),
      ),
    );
    el.sessionList.append(li);
  }
  if (refocus) {
    const li = el.sessionList.querySelector(`li[data-session-id="${CSS.escape(refocus.id)}"]`);
    const target = li && li.querySelector(refocus.action ? `[data-action="${CSS.escape(refocus.action)}"]` : '.session-select');
    if (target) target.focus({ preventScroll: true });
  }
  const cur = state.sessions.find((s) => s.thread_id === state.sessionId);
  el.chatTitle.textContent = cur ? cur.title || 'New Conversation' : 'New chat';
  document.title = (cur ? cur.title + ' — ' : '') + 'GNS3 Copilot';
}

function renameForm(s, draft) {
  const input = h('input', { class: 'rename-input', value: draft ?? s.title ?? '', maxlength: '255', 'aria-label': 'New title for ' + (s.title || 'the conversation') });
  const gen = sessionsRender;
  let done = false;
  const finish = async (save) => {
    if (done || gen !== sessionsRender) return;
    done = true;
    const title = input.value.trim();
    state.renaming = '';
    if (!save || title === s.title) {
      renderSessions();
      return;
    }
    if (title.length < 1 || title.length > 255) {
      renderSessions();
      banner('A title must be 1 to 255 characters long.');
      return;
    }
    try {
      const updated = await api.rename(state.projectId, s.thread_id, title);
      Object.assign(s, updated || { title });
      banner('');
    } catch (err) {
      if (err.kind !== 'expired') banner('Renaming failed: ' + err.message);
    }
    await loadSessions();
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      finish(true);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      finish(false);
    }
  });
  input.addEventListener('blur', () => finish(true));
  queueMicrotask(() => {
    input.focus();
    input.select();
  });
  return h('div', { class: 'rename' }, input);
}

function startRename(s) {
  state.renaming = s.thread_id;
  renderSessions();
}

async function togglePin(s) {
  try {
    await api.pin(state.projectId, s.thread_id, !s.pinned);
    banner('');
  } catch (err) {
    if (err.kind !== 'expired') banner((s.pinned ? 'Unpinning' : 'Pinning') + ' failed: ' + err.message);
  }
  await loadSessions();
  const btn = el.sessionList.querySelector(`li[data-session-id="${CSS.escape(s.thread_id)}"] [data-action="pin"]`);
  if (btn) btn.focus();
}

function confirmDelete(s) {
  $('confirm-title').textContent = 'Delete conversation?';
  el.confirmText.textContent = `“${s.title || 'New Conversation'}” and all its messages will be deleted for good.`;
  el.confirm.returnValue = '';
  el.confirm.onclose = async () => {
    el.confirm.onclose = null;
    if (el.confirm.returnValue !== 'ok') return;
    try {
      await api.remove(state.projectId, s.thread_id);
      banner('');
      if (s.thread_id === state.sessionId) newChat();
      const live = readLive();
      if (live && live.sessionId === s.thread_id) clearLive();
    } catch (err) {
      if (err.kind !== 'expired') banner('Deleting failed: ' + err.message);
    }
    await loadSessions();
    el.newChat.focus();
  };
  el.confirm.showModal();
}

el.newChat.addEventListener('click', () => newChat());

function setCurrentSession(id) {
  if ((id || '') !== state.sessionId) exercise.select(id);
  state.sessionId = id || '';
  if (id) sessionStorage.setItem(KEYS.session, id);
  else sessionStorage.removeItem(KEYS.session);
  for (const li of el.sessionList.children) {
    const active = li.dataset.sessionId === id;
    li.classList.toggle('active', active);
    const b = li.querySelector('.session-select');
    if (b) {
      if (active) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    }
  }
  const cur = state.sessions.find((s) => s.thread_id === id);
  el.chatTitle.textContent = cur ? cur.title || 'New Conversation' : 'New chat';
}

function newChat() {
  detachStream();
  setCurrentSession('');
  showEmptyConversation();
  if (location.hash !== '#settings') el.input.focus({ preventScroll: true });
}

function showEmptyConversation(text) {
  clear(el.conversation);
  el.conversation.append(
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
              h('li', {}, h('button', { type: 'button', class: 'suggestion', text: q, onclick: () => { el.input.value = q; el.input.focus(); } })),
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
async function openSession(id, { listed = false } = {}) {
  detachStream();
  setCurrentSession(id);
  const gen = ++opens;
  const current = () => gen === opens && state.sessionId === id && !state.stream;
  clear(el.conversation);
  el.conversation.append(h('p', { class: 'muted loading', text: 'Loading the conversation…' }));
  if (!listed) {
    const ok = await loadSessions();
    if (!current()) return;
    if (!ok) {
      for (const p of el.conversation.querySelectorAll('.loading')) p.remove();
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
    clear(el.conversation);
    if (err.status === 404) {
      el.conversation.append(noticeBox('info', 'This conversation no longer exists.'));
      setCurrentSession('');
      await loadSessions();
    } else if (err.kind !== 'expired') {
      showApiError(err, () => openSession(id));
    }
    return null;
  }
  // A message sent while the history loaded has the conversation now; its turn reloads it.
  if (state.sessionId !== id || state.stream) return null;
  clear(el.conversation);
  const messages = (hist && hist.messages) || [];
  el.conversation.append(...renderHistory(messages));
  if (!messages.length) showEmptyConversation();
  restoreApprovals(el.conversation, id);
  exercise.load(id);
  scrollToEnd(true);
  return messages.length;
}

// ---------------------------------------------------------------------------------------------
// Sending a message and following a turn

el.composer.addEventListener('submit', (e) => {
  e.preventDefault();
  send();
});

el.input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});

el.stop.addEventListener('click', () => stopTurn());
el.inject.addEventListener('click', () => send(el.input.value, true));

// The session's troubleshooting exercise, above the conversation.
const exercise = new ExerciseBanner($('exercise'));

/** The message of an inject request when the box is empty, as GNS3's own copilot words it. */
const INJECT_MESSAGE = 'Inject a network fault for troubleshooting practice';

function setComposerEnabled(on) {
  el.input.disabled = !on;
  el.send.disabled = !on || !!state.stream;
  el.inject.disabled = el.send.disabled;
}

function setBusy(on) {
  el.send.hidden = on;
  el.send.disabled = on;
  el.inject.disabled = on;
  el.stop.hidden = !on;
  el.stop.disabled = on && !(state.stream && state.stream.sessionId);
  el.stop.textContent = 'Stop';
  el.composer.classList.toggle('busy', on);
}

function scrollToEnd(force = false) {
  const c = el.conversation;
  const near = c.scrollHeight - c.scrollTop - c.clientHeight < 120;
  if (force || near) c.scrollTop = c.scrollHeight;
}

async function send(textArg, inject = false) {
  const text = (textArg ?? el.input.value).trim() || (inject ? INJECT_MESSAGE : '');
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
  const loading = !!el.conversation.querySelector('.loading');
  for (const p of el.conversation.querySelectorAll('.loading')) p.remove();
  if (el.conversation.querySelector('.empty-state')) clear(el.conversation);
  // A new attempt replaces the notices of earlier attempts that failed.
  for (const n of el.conversation.querySelectorAll('.notice[data-message]')) n.remove();
  const userEl = userMessage(text);
  const turn = new AssistantTurn();
  el.conversation.append(userEl, turn.el);
  turn.setStreaming(true);
  el.input.value = '';
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
    if (!el.input.value) el.input.value = text;
    if (err.name !== 'AbortError' && err.kind !== 'expired') showApiError(err, () => send(text), text);
    return;
  }
  await follow(ctx, res);
}

function newStream(props) {
  const ctx = { controller: new AbortController(), lastEventId: '', turnId: '', expectTurn: '', userEl: null, live: null, persistTimer: 0, ...props };
  state.stream = ctx;
  return ctx;
}

/** detachStream stops reading the current turn's events; the turn itself goes on. */
function detachStream() {
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
async function follow(ctx, res) {
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
      await openSession(ctx.sessionId);
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
      await showHistory(ctx.sessionId);
      return 'gone';
    }
  }
}

function lostConnection(ctx, why = '') {
  ctx.turn.finish();
  state.stream = null;
  setBusy(false);
  if (ctx.live) persistLive(ctx);
  el.conversation.append(
    noticeBox('error', 'The connection to the copilot was lost. The turn goes on in the background. ' + why, h('button', { type: 'button', text: 'Rejoin', onclick: () => openSession(ctx.sessionId) })),
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
      setCurrentSession(d.session_id);
      // No history is shown for the session this turn opened, so nothing else reads its exercise.
      exercise.load(d.session_id);
      if (isNew) loadSessions();
    }
    if (ctx.live) ctx.live.turnId = ctx.turnId;
    el.stop.disabled = false;
  }
  if (ctx.live) recordLive(ctx, type, d, ev.id);
  if (type === 'exercise_started' || type === 'exercise_checked') exercise.event(d);
  const terminal = ctx.turn.handle(type, d);
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
  if (ctx.reloadHistory) await showHistory(ctx.sessionId);
  await loadSessions();
  scrollToEnd();
}

async function stopTurn() {
  const ctx = state.stream;
  if (!ctx || !ctx.sessionId) return;
  el.stop.disabled = true;
  el.stop.textContent = 'Stopping…';
  try {
    await api.abort(state.projectId, ctx.sessionId);
    announce('Stopping the copilot.');
  } catch (err) {
    if (err.status === 409) return; // the turn ended on its own meanwhile
    if (err.kind !== 'expired') banner('Stopping failed: ' + err.message);
    el.stop.disabled = false;
    el.stop.textContent = 'Stop';
  }
}

// ---------------------------------------------------------------------------------------------
// Surviving a reload: the running turn's events are kept per tab, compacted, and the page
// rejoins with the last event id it had, so it shows what it had plus everything it missed.

function readLive() {
  try {
    const v = JSON.parse(sessionStorage.getItem(KEYS.live) || 'null');
    if (!v || typeof v !== 'object' || !Array.isArray(v.events)) return null;
    v.events = v.events.filter((e) => Array.isArray(e) && typeof e[0] === 'string' && e[1] && typeof e[1] === 'object');
    v.message = typeof v.message === 'string' ? v.message : '';
    v.lastEventId = typeof v.lastEventId === 'string' ? v.lastEventId : '';
    v.turnId = typeof v.turnId === 'string' ? v.turnId : '';
    return v;
  } catch {
    return null;
  }
}

function clearLive() {
  sessionStorage.removeItem(KEYS.live);
}

function recordLive(ctx, type, d, id) {
  const events = ctx.live.events;
  const last = events[events.length - 1];
  if (type === 'content' && last && last[0] === 'content') {
    last[1] = { ...last[1], content: (last[1].content || '') + (d.content || '') };
  } else if (type === 'tool_call' && d.tool_call && d.tool_call.id) {
    // Arguments accumulate: only the latest frame of a call matters.
    const k = events.findIndex((e) => e[0] === 'tool_call' && e[1].tool_call && e[1].tool_call.id === d.tool_call.id);
    if (k >= 0 && k === events.length - 1) events[k] = [type, d];
    else events.push([type, d]);
  } else {
    events.push([type, d]);
  }
  ctx.live.lastEventId = id || ctx.live.lastEventId;
  if (!ctx.persistTimer) {
    ctx.persistTimer = setTimeout(() => {
      ctx.persistTimer = 0;
      if (state.stream === ctx) persistLive(ctx);
    }, 200);
  }
}

function persistLive(ctx) {
  if (!ctx.live || !ctx.live.sessionId) return;
  try {
    sessionStorage.setItem(KEYS.live, JSON.stringify(ctx.live));
  } catch {
    // Too big for this tab's storage: keep only where to rejoin; a reload then replays the turn.
    try {
      sessionStorage.setItem(KEYS.live, JSON.stringify({ ...ctx.live, events: [], lastEventId: '' }));
    } catch {
      clearLive();
    }
  }
}

window.addEventListener('pagehide', () => {
  if (state.stream && state.stream.live) persistLive(state.stream);
});

/**
 * joinRunning shows a session whose turn the service says is running: the stored history, then
 * the turn itself. With this tab's record of that turn (kept across a reload) it shows what it
 * had at once and asks only for what came after its last event id; without one it follows the
 * turn from its start, whose turn_started event carries the question.
 */
async function joinRunning(sessionId, record, current) {
  const usable = record && record.message && record.lastEventId && !record.events.some((e) => e[0] === 'done' || e[0] === 'error');
  const live = usable ? record : { projectId: state.projectId, sessionId, turnId: '', message: '', lastEventId: '', events: [] };
  const shown = await showHistory(sessionId);
  if (shown === null || !current()) return;
  if (el.conversation.querySelector('.empty-state')) clear(el.conversation);
  const userEl = live.message ? userMessage(live.message) : null;
  let turn = new AssistantTurn();
  if (userEl) el.conversation.append(userEl);
  el.conversation.append(turn.el);
  turn.setStreaming(true);
  for (const [type, d] of live.events) turn.handle(type, d);
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
      el.conversation.append(turn.el);
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
    await showHistory(sessionId);
    return;
  }
  await follow(ctx, res);
}

// ---------------------------------------------------------------------------------------------
// Errors a person can act on

function describe(err) {
  switch (err.kind) {
    case 'network':
      return 'The copilot service cannot be reached. Check your connection and that the service is running.';
    case 'gns3-down':
      return 'The GNS3 server cannot be reached right now. Check that it is running, then try again.';
    case 'project-closed':
      return 'This project is not opened in GNS3. Open it to chat about it.';
    case 'no-llm':
      return 'No LLM is configured for you yet. Add a model configuration in your LLM settings, or ask the operator to set a server default.';
    default:
      return err.message || 'Something went wrong.';
  }
}

function retryButton(fn) {
  return h('button', { type: 'button', text: 'Try again', onclick: fn });
}

function showApiError(err, retry, text) {
  const actions = [];
  if (err.kind === 'no-llm') actions.push(h('a', { href: '#settings', class: 'button-link', text: 'Open LLM settings' }));
  else if (err.kind === 'project-closed') actions.push(h('button', { type: 'button', class: 'primary', text: 'Open project', onclick: () => openCurrentProject() }));
  else if (err.status === 409 && state.sessionId) actions.push(h('button', { type: 'button', text: 'Follow the running answer', onclick: () => openSession(state.sessionId) }));
  else if (retry && (err.kind === 'gns3-down' || err.kind === 'network' || err.status >= 500)) actions.push(retryButton(retry));
  const box = noticeBox('error', describe(err), ...actions);
  if (err.kind === 'no-llm' && err.message && err.message !== describe(err)) box.append(h('details', { class: 'small' }, h('summary', { text: 'Details' }), h('p', { text: err.message })));
  if (text) box.dataset.message = text;
  el.conversation.append(box);
  scrollToEnd(true);
}

// ---------------------------------------------------------------------------------------------

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

window.addEventListener('hashchange', route);

async function boot() {
  if (!token()) {
    showSignIn();
    return;
  }
  try {
    await enterApp();
  } catch (err) {
    if (err.kind === 'expired') return;
    showSignIn(describe(err));
  }
}

boot();
