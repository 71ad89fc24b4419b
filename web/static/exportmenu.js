// The sidebar's Export menu: a session's transcript downloaded as JSON or Markdown from
// GET …/chat/sessions/{id}/export. The file is fetched with the bearer token (the token is never
// put in a URL), then handed to the browser as a download under the name the server chose.

import { h } from './dom.js';
import { icon } from './icons.js';
import { request } from './api.js';

/** fileNameFrom reads the file name of a Content-Disposition header (RFC 6266, filename* first). */
export function fileNameFrom(disposition) {
  const header = String(disposition || '');
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      // A malformed encoding falls through to the plain name.
    }
  }
  const plain = /filename\s*=\s*"((?:[^"\\]|\\.)*)"|filename\s*=\s*([^;\s]+)/.exec(header);
  if (!plain) return '';
  return (plain[1] ?? plain[2]).replace(/\\(.)/g, '$1');
}

/** exportSession downloads one session in a format ("json" or "markdown"); it returns the file name. */
export async function exportSession(projectId, sessionId, format) {
  const path = `/v3/projects/${encodeURIComponent(projectId)}/chat/sessions/${encodeURIComponent(sessionId)}/export?format=${encodeURIComponent(format)}`;
  const res = await request('GET', path, { raw: true, headers: { Accept: format === 'markdown' ? 'text/markdown' : 'application/json' } });
  const blob = await res.blob();
  const name = fileNameFrom(res.headers.get('Content-Disposition')) || `conversation.${format === 'markdown' ? 'md' : 'json'}`;
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  // The browser reads the blob after the click returns; give it time before letting it go.
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  return name;
}

/** exportMenu is the Export button of one session in the sidebar. onError gets a message. */
export function exportMenu(session, projectId, onError) {
  const title = session.title || 'New Conversation';
  const menu = h('details', { class: 'export-menu', dataset: { action: 'export' } });
  const choose = (format) => async () => {
    menu.open = false;
    try {
      await exportSession(projectId, session.thread_id, format);
    } catch (err) {
      if (err && err.kind !== 'expired') onError('Exporting failed: ' + err.message);
    }
  };
  menu.append(
    h('summary', { class: 'icon-button', 'aria-label': 'Export ' + title, title: 'Export' }, icon('download')),
    h(
      'div',
      { class: 'export-choices', role: 'group', 'aria-label': 'Export format' },
      h('button', { type: 'button', dataset: { format: 'json' }, onclick: choose('json') }, 'JSON'),
      h('button', { type: 'button', dataset: { format: 'markdown' }, onclick: choose('markdown') }, 'Markdown'),
    ),
  );
  menu.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && menu.open) {
      menu.open = false;
      menu.querySelector('summary').focus();
    }
  });
  return menu;
}
