// The sessions sidebar: the project's conversations (pinned first, with their statistics), each
// with Pin, Rename (inline), Export and Delete, and New chat above them.

import { api } from './api.js';
import { clear, formatCount, h, relativeTime } from './dom.js';
import { exportMenu } from './exportmenu.js';
import { icon } from './icons.js';
import { clearLive, readLive } from './liverecord.js';
import { $, banner, KEYS, state } from './page.js';

const el = {
  newChat: $('new-chat'),
  sessionList: $('session-list'),
  sessionsEmpty: $('sessions-empty'),
  chatTitle: $('chat-title'),
  confirm: $('confirm-dialog'),
  confirmText: $('confirm-text'),
};

// What the sidebar asks of the rest of the page; see initSessions.
let hooks = null;

/**
 * initSessions connects the sidebar: open(id) shows a session, newChat() starts an empty
 * conversation, listFailed(err, projectId) shows why the list could not be read.
 */
export function initSessions(given) {
  hooks = given;
  el.newChat.addEventListener('click', () => hooks.newChat());
}

/**
 * resetSessions empties the list for a newly chosen project p (null: none): New chat is offered
 * for an opened project only, and a closed one says why it lists nothing.
 */
export function resetSessions(p) {
  const opened = p && p.status === 'opened';
  el.newChat.disabled = !opened;
  clear(el.sessionList);
  state.sessions = [];
  if (p && !opened) {
    el.sessionsEmpty.hidden = false;
    el.sessionsEmpty.textContent = 'Open the project to see its conversations.';
    el.chatTitle.textContent = p.name;
  }
}

/** loadSessions reads the project's sessions (with whether a turn runs in each); false on failure. */
export async function loadSessions() {
  if (!state.projectId) return false;
  const projectId = state.projectId;
  try {
    const list = await api.sessions(projectId);
    if (projectId !== state.projectId) return false;
    state.sessions = Array.isArray(list) ? list : [];
  } catch (err) {
    if (err.kind !== 'expired' && projectId === state.projectId) hooks.listFailed(err, projectId);
    return false;
  }
  renderSessions();
  return true;
}

function sessionStats(s) {
  const msgs = s.message_count || 0;
  const calls = s.llm_calls_count || 0;
  const thinking = s.reasoning_tokens > 0 ? `, ${formatCount(s.reasoning_tokens)} thinking` : '';
  return `${msgs} message${msgs === 1 ? '' : 's'} · ${calls} LLM call${calls === 1 ? '' : 's'} · ${formatCount(s.total_tokens)} tokens${thinking}`;
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
          { type: 'button', class: 'session-select', 'aria-current': active ? 'true' : null, onclick: () => hooks.open(s.thread_id) },
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
      if (s.thread_id === state.sessionId) hooks.newChat();
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

/** markCurrentSession makes id (or none) the open session: kept across a reload, marked in the list. */
export function markCurrentSession(id) {
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
