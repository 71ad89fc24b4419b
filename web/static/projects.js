// The project picker in the top bar: the user's GNS3 projects (opened ones first), the chosen
// project's status, and the button that opens a closed one.

import { api, describeError } from './api.js';
import { clear, h } from './dom.js';
import { $, banner, currentProject, KEYS, retryButton, state } from './page.js';

const el = {
  select: $('project-select'),
  status: $('project-status'),
  open: $('project-open'),
};

// choose(id) makes a project the page's project; see initProjects.
let choose = null;

/** initProjects connects the picker; choose(id) is called with every project chosen. */
export function initProjects(given) {
  choose = given.choose;
  el.select.addEventListener('change', () => {
    state.sessionId = '';
    sessionStorage.removeItem(KEYS.session);
    choose(el.select.value);
  });
  el.open.addEventListener('click', () => openCurrentProject());
}

/** loadProjects lists the projects and chooses preferId, else the last one chosen, else an opened one. */
export async function loadProjects(preferId = '') {
  let list;
  try {
    list = await api.projects();
  } catch (err) {
    if (err.kind === 'expired') return;
    banner(describeError(err), retryButton(() => loadProjects(preferId)));
    return;
  }
  state.projects = Array.isArray(list) ? list : [];
  clear(el.select);
  if (!state.projects.length) {
    el.select.append(h('option', { value: '', text: 'No projects' }));
    el.select.disabled = true;
    choose('');
    return;
  }
  el.select.disabled = false;
  const opened = state.projects.filter((p) => p.status === 'opened');
  const others = state.projects.filter((p) => p.status !== 'opened');
  const group = (label, items) =>
    items.length
      ? h('optgroup', { label }, items.map((p) => h('option', { value: p.project_id, text: p.status === 'opened' ? p.name : `${p.name} (${p.status || 'closed'})` })))
      : null;
  for (const g of [group('Opened', opened), group('Closed', others)]) if (g) el.select.append(g);
  const want = preferId || state.projectId;
  const chosen = state.projects.find((p) => p.project_id === want) || opened[0] || state.projects[0];
  el.select.value = chosen.project_id;
  await choose(chosen.project_id);
}

/** showProjectStatus shows whether p is opened, with the Open project button when it is not. */
export function showProjectStatus(p) {
  const opened = p && p.status === 'opened';
  el.status.textContent = p ? (opened ? 'opened' : p.status || 'closed') : '';
  el.status.dataset.status = p ? p.status : '';
  el.open.hidden = !p || opened;
}

export async function openCurrentProject() {
  const p = currentProject();
  if (!p) return;
  el.open.disabled = true;
  el.open.textContent = 'Opening…';
  try {
    await api.openProject(p.project_id);
    await loadProjects(p.project_id);
  } catch (err) {
    if (err.kind !== 'expired') banner('Opening the project failed: ' + err.message);
  } finally {
    el.open.disabled = false;
    el.open.textContent = 'Open project';
  }
}
