// The approval card: when the copilot is about to change the lab (configuration lines sent to
// devices, deleting, stopping or reloading nodes), the turn waits and this card shows the plan
// (per device the exact lines, what the safety policy says of each, and the configuration read
// before asking) with Approve and Reject. After a decision, or when nobody answered in time,
// the card stays as the record of it. A reloaded page rebuilds it from the replayed events, or
// from the session's approvals for turns that are over.

import { request } from './api.js';
import { h } from './dom.js';

const enc = encodeURIComponent;
let projectId = '';
// The card object behind each card element, so an approval seen twice (replayed events and the
// stored record after a reload) updates the one card on the page.
const cardOf = new WeakMap();

/** setApprovalProject tells the cards which project their decisions go to. */
export function setApprovalProject(id) {
  projectId = id || '';
}

/** describeStatus is the card's one-line record of how an approval stands. */
export function describeStatus(a) {
  switch (a.status) {
    case 'pending':
      return 'Waiting for your decision' + (a.expires_at ? ' (expires ' + new Date(a.expires_at).toLocaleTimeString() + ')' : '');
    case 'approved':
      return 'Approved' + (a.decided_by ? ' by ' + a.decided_by : '') + (a.comment ? ': ' + a.comment : '');
    case 'rejected':
      return 'Rejected' + (a.decided_by ? ' by ' + a.decided_by : '') + (a.comment ? ': ' + a.comment : '');
    case 'expired':
      return 'Expired without an answer: nothing was done';
    default:
      return String(a.status || '');
  }
}

/** planLines lists, per device, the lines with their verdict marks, for the card and tests. */
export function planLines(plan) {
  const out = [];
  for (const d of (plan && plan.devices) || []) {
    for (const l of d.lines || []) {
      const mark = l.verdict === 'blocked' ? '✗ ' : l.verdict === 'read' ? '· ' : '+ ';
      out.push(`${d.name}: ${mark}${l.command}${l.reason ? ' — ' + l.reason : ''}`);
    }
  }
  return out;
}

export class ApprovalCard {
  /** byProject decides through the project's approvals route (approvals asked outside this chat). */
  constructor(a, { byProject = false } = {}) {
    this.id = a.approval_id;
    this.a = a;
    this.byProject = byProject;
    this.statusEl = h('p', { class: 'approval-status', role: 'status' });
    this.errorEl = h('p', { class: 'approval-error', role: 'alert', hidden: true });
    this.comment = h('input', { class: 'approval-comment', type: 'text', maxlength: '2000', placeholder: 'Comment for the copilot (optional)', 'aria-label': 'Comment for the copilot' });
    this.approveBtn = h('button', { type: 'button', class: 'approve', text: 'Approve', onclick: () => this.decide('approve') });
    this.rejectBtn = h('button', { type: 'button', class: 'reject', text: 'Reject', onclick: () => this.decide('reject') });
    this.actions = h('div', { class: 'approval-actions' }, this.comment, this.approveBtn, this.rejectBtn);
    this.el = h(
      'section',
      { class: 'approval-card', 'aria-label': 'Approval needed', dataset: { approvalId: a.approval_id, toolCallId: a.tool_call_id || '' } },
      h('h3', { class: 'approval-title', text: a.kind === 'config' ? 'Approve these configuration changes?' : 'Approve this change to the lab?' }),
      this.planEl(a.plan || {}),
      this.statusEl,
      this.errorEl,
      this.actions,
    );
    this.update(a);
  }

  planEl(plan) {
    const parts = [];
    if (plan.summary) parts.push(h('p', { class: 'approval-summary', text: plan.summary }));
    for (const d of plan.devices || []) {
      const lines = h(
        'ul',
        { class: 'approval-lines' },
        (d.lines || []).map((l) =>
          h('li', { class: 'line-' + l.verdict }, h('code', { text: l.command }), l.verdict === 'blocked' ? h('span', { class: 'line-reason', text: ' blocked: ' + (l.reason || '') }) : null),
        ),
      );
      const current = h(
        'details',
        { class: 'approval-current' },
        h('summary', { text: 'Current configuration' + (d.read_command ? ' (' + d.read_command + ')' : '') }),
        h('pre', { class: 'mono', text: d.current_config || d.read_error || '(empty)' }),
      );
      parts.push(h('div', { class: 'approval-device' }, h('h4', { text: d.name + (d.platform ? ' · ' + d.platform : '') }), lines, current));
    }
    for (const f of plan.failed || []) parts.push(h('p', { class: 'approval-failed', text: `${f.name}: ${f.error} (not part of the change)` }));
    return h('div', { class: 'approval-plan' }, parts);
  }

  /** update shows the approval's current state; a decided card keeps only its record. */
  update(a) {
    // A late copy of the pending state (a slow reload) never undoes a decision already shown.
    if (a.status === 'pending' && this.a.status && this.a.status !== 'pending') return;
    this.a = { ...this.a, ...a };
    const st = this.a.status || 'pending';
    this.el.dataset.status = st;
    this.statusEl.textContent = describeStatus(this.a);
    this.actions.hidden = st !== 'pending';
    if (st !== 'pending') this.errorEl.hidden = true;
  }

  async decide(decision) {
    this.approveBtn.disabled = this.rejectBtn.disabled = true;
    this.errorEl.hidden = true;
    const base = this.byProject ? `/v3/projects/${enc(projectId)}/chat` : `/v3/projects/${enc(projectId)}/chat/sessions/${enc(this.a.session_id)}`;
    const path = `${base}/approvals/${enc(this.id)}`;
    try {
      this.update(await request('POST', path, { body: { decision, comment: this.comment.value } }));
    } catch (err) {
      this.errorEl.textContent = err.message || String(err);
      this.errorEl.hidden = false;
      if (err.status === 409) {
        // Decided elsewhere (another tab) or expired: show what stands.
        try {
          const list = await request('GET', `${base}/approvals`);
          const now = (list || []).find((x) => x.approval_id === this.id);
          if (now) this.update(now);
        } catch {
          /* the error above says enough */
        }
      }
    } finally {
      this.approveBtn.disabled = this.rejectBtn.disabled = false;
    }
  }
}

/**
 * placeApproval creates or updates the card of an approval event inside container, right after
 * the tool card of its call when there is one. It returns the card.
 */
export function placeApproval(container, cards, a, before = null) {
  const shown = document.querySelector(`.approval-card[data-approval-id="${CSS.escape(a.approval_id)}"]`);
  let card = cards.get(a.approval_id) || (shown && cardOf.get(shown));
  if (card) {
    cards.set(a.approval_id, card);
    card.update(a);
    return card;
  }
  card = new ApprovalCard(a);
  cards.set(a.approval_id, card);
  cardOf.set(card.el, card);
  const tool = a.tool_call_id ? container.querySelector(`.tool-card[data-tool-call-id="${CSS.escape(a.tool_call_id)}"]`) : null;
  if (tool) tool.after(card.el);
  else container.insertBefore(card.el, before);
  return card;
}

/** restoreApprovals adds the session's approvals to a conversation rendered from history. */
export async function restoreApprovals(container, sessionId) {
  if (!projectId || !sessionId) return;
  let list;
  try {
    list = await request('GET', `/v3/projects/${enc(projectId)}/chat/sessions/${enc(sessionId)}/approvals`);
  } catch {
    return; // the conversation is readable without its approval records
  }
  const cards = new Map();
  for (const a of list || []) placeApproval(container, cards, a);
}

/**
 * watchPendingApprovals keeps panel showing the project's pending approvals that no card of
 * the open conversation shows: those an agent's MCP calls (or another of the user's sessions)
 * wait for. It polls every few seconds and returns a function that stops it.
 */
export function watchPendingApprovals(panel, everyMs = 5000) {
  const cards = new Map();
  let stopped = false;
  let timer = 0;
  const list = h('div', { class: 'pending-approvals-list' });
  panel.replaceChildren(h('h3', { class: 'pending-approvals-title', text: 'Waiting for your approval elsewhere (agents, other chats)' }), list);
  async function poll() {
    if (stopped) return;
    if (projectId) {
      try {
        const pending = (await request('GET', `/v3/projects/${enc(projectId)}/chat/approvals?status=pending`)) || [];
        const ids = new Set(pending.map((a) => a.approval_id));
        for (const [id, card] of cards) {
          // Decided here or elsewhere, or expired: no longer waiting, so no longer listed.
          if (!ids.has(id)) {
            card.el.remove();
            cards.delete(id);
          }
        }
        for (const a of pending) {
          if (cards.has(a.approval_id)) continue;
          if (document.querySelector(`#conversation .approval-card[data-approval-id="${CSS.escape(a.approval_id)}"]`)) continue;
          const card = new ApprovalCard(a, { byProject: true });
          cards.set(a.approval_id, card);
          list.append(card.el);
        }
      } catch {
        /* the next poll tries again */
      }
    }
    panel.hidden = cards.size === 0;
    timer = setTimeout(poll, everyMs);
  }
  poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
