// What the parts of the chat page share: the signed-in user, the chosen project and session,
// the running turn's connection, and the few elements every part writes to (the banner above
// the layout, the screen reader's status line, the conversation's scroll). State that must
// survive a reload (chosen project and session, the running turn's record) lives in
// sessionStorage, per tab, under KEYS.

import { clear, h } from './dom.js';

export const KEYS = {
  project: 'gns3copilot.project',
  session: 'gns3copilot.session',
  live: 'gns3copilot.live',
};

export const state = {
  user: null,
  projects: [],
  projectId: sessionStorage.getItem(KEYS.project) || '',
  sessions: [],
  sessionId: sessionStorage.getItem(KEYS.session) || '',
  stream: null, // the connection to a running turn's events: {controller, turn, userEl, sessionId, lastEventId, live}
  renaming: '',
};

export const $ = (id) => document.getElementById(id);

const bannerEl = $('banner');
const statusEl = $('chat-status');
export const conversationEl = $('conversation');

export function currentProject() {
  return state.projects.find((p) => p.project_id === state.projectId) || null;
}

/** banner shows a message (with action buttons) above the layout; an empty message hides it. */
export function banner(message, ...actions) {
  clear(bannerEl);
  if (!message) {
    bannerEl.hidden = true;
    return;
  }
  bannerEl.append(h('span', { text: message }), ...actions);
  bannerEl.hidden = false;
}

/** announce tells a screen reader what the conversation is doing. */
export function announce(text) {
  statusEl.textContent = text;
}

/** scrollToEnd follows the conversation's end when the reader is already near it (or forced). */
export function scrollToEnd(force = false) {
  const c = conversationEl;
  const near = c.scrollHeight - c.scrollTop - c.clientHeight < 120;
  if (force || near) c.scrollTop = c.scrollHeight;
}

export function retryButton(fn) {
  return h('button', { type: 'button', text: 'Try again', onclick: fn });
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
