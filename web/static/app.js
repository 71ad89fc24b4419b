// The chat page: sign-in, then the app's parts wired together — the project picker
// (projects.js), the sessions sidebar (sessions.js), the conversation (conversation.js, with the
// running turn in liveturn.js), the lab beside it (topology.js), approvals waiting elsewhere
// (approvals.js) and the LLM settings view (settings.js, at #settings). What the parts share
// is in page.js.

import { api, ApiError, describeError, setExpiredHandler, setToken, token } from './api.js';
import { setApprovalProject, watchPendingApprovals } from './approvals.js';
import { composer, setComposerEnabled } from './composer.js';
import { initConversation, newChat, openSession, setConversationProject, showApiError, showEmptyConversation, showProjectClosed } from './conversation.js';
import { clearLive, readLive } from './liverecord.js';
import { detachStream } from './liveturn.js';
import { $, banner, conversationEl, currentProject, KEYS, state } from './page.js';
import { initProjects, loadProjects, showProjectStatus } from './projects.js';
import { initSessions, loadSessions, resetSessions } from './sessions.js';
import { initSettings, showSettings } from './settings.js';
import { TopologyPanel } from './topology.js';

const el = {
  boot: $('boot'),
  signin: $('view-signin'),
  signinForm: $('signin-form'),
  signinError: $('signin-error'),
  app: $('view-app'),
  userName: $('user-name'),
  signout: $('signout'),
  sidebar: $('sidebar'),
  chat: $('chat'),
  settings: $('view-settings'),
};

const topology = new TopologyPanel($('topology'), conversationEl);

initProjects({ choose: selectProject });
initSessions({
  open: (id) => openSession(id),
  newChat,
  listFailed: (err, projectId) => showApiError(err, () => selectProject(projectId)),
});
initConversation();

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

function route() {
  const settings = location.hash === '#settings';
  el.settings.hidden = !settings;
  el.chat.hidden = settings;
  el.sidebar.hidden = settings;
  if (settings && state.user) showSettings();
  if (!settings && !el.app.hidden) composer.input.focus({ preventScroll: true });
}

// ---------------------------------------------------------------------------------------------
// Sign-in

el.signinForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const username = $('signin-username').value.trim();
  const password = $('signin-password').value;
  const apiKey = $('signin-apikey').value.trim();
  if (apiKey) {
    await signInWithKey(apiKey);
    return;
  }
  if (!username || !password) {
    el.signinError.textContent = 'Enter your GNS3 username and password, or an API key.';
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

// signInWithKey signs in with a GNS3 API key: GNS3 itself says whose it is, then it is the
// page's bearer like a signed-in token.
async function signInWithKey(apiKey) {
  const submit = $('signin-submit');
  submit.disabled = true;
  submit.textContent = 'Signing in…';
  try {
    await api.meWith(apiKey);
    setToken(apiKey);
    $('signin-apikey').value = '';
    $('signin-password').value = '';
    await enterApp();
  } catch (err) {
    let msg = err.message;
    if (err.status === 401) msg = 'GNS3 does not accept this API key: check it, or create a new one in GNS3 (it may have been revoked).';
    else if (err.kind === 'gns3-down') msg = 'The GNS3 server cannot be reached right now. Check that it is running, then try again.';
    el.signinError.textContent = msg;
    el.signinError.hidden = false;
  } finally {
    submit.disabled = false;
    submit.textContent = 'Sign in';
  }
}

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
// Choosing a project: every part follows it.

async function selectProject(id) {
  detachStream();
  const changed = id !== state.projectId;
  state.projectId = id;
  setApprovalProject(id);
  setConversationProject(id);
  if (id) sessionStorage.setItem(KEYS.project, id);
  if (changed) {
    state.sessionId = '';
    sessionStorage.removeItem(KEYS.session);
  }
  const p = currentProject();
  const opened = p && p.status === 'opened';
  showProjectStatus(p);
  resetSessions(p);
  setComposerEnabled(!!opened);
  topology.follow(opened ? id : '');
  if (!p) {
    showEmptyConversation('There is no project yet. Create one in GNS3, then reload this page.');
    return;
  }
  if (!opened) {
    showProjectClosed(p);
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
    showSignIn(describeError(err));
  }
}

boot();
