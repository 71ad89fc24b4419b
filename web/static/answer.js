// What the conversation shows of each exchange: the user's message, the copilot's answer
// (Markdown, rendered safely, with its tool and approval cards in the order they came), and the
// mapping from the chat API's SSE events and stored history onto them.

import { placeApproval } from './approvals.js';
import { h } from './dom.js';
import { render as renderMarkdown } from './markdown.js';
import { eventTime, ReasoningBlock } from './reasoning.js';
import { ToolCard } from './toolcards.js';

/** userMessage renders what the user typed as plain text (their newlines kept). */
export function userMessage(text) {
  return h(
    'article',
    { class: 'msg user', 'aria-label': 'You said' },
    h('div', { class: 'msg-role', text: 'You' }),
    h('div', { class: 'msg-body user-text', text }),
  );
}

/** noticeBox is an inline message about the conversation (an error, a stop). */
export function noticeBox(kind, text, ...actions) {
  return h('div', { class: 'notice notice-' + kind, role: kind === 'error' ? 'alert' : 'status' }, h('span', { class: 'notice-text', text }), ...actions);
}

/**
 * AssistantTurn is one answer of the copilot: reasoning, text segments and tool cards in the
 * order the model produced them. It applies SSE events (handle) and stored history messages
 * alike.
 */
export class AssistantTurn {
  constructor() {
    this.body = h('div', { class: 'msg-body' });
    this.thinking = h('p', { class: 'thinking' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', { text: 'Thinking…' }));
    this.el = h('article', { class: 'msg assistant', 'aria-label': 'Copilot answered' }, h('div', { class: 'msg-role', text: 'Copilot' }), this.body);
    this.segments = [];
    this.cards = new Map();
    this.byIndex = new Map();
    this.callStart = 0;
    this.text = null;
    // reasoning is the model call's reasoning while the model thinks (a ReasoningBlock), until
    // whatever the call produces next ends it.
    this.reasoning = null;
    this.renderTimer = 0;
    this.finished = false;
    this.onError = null;
    this.approvals = new Map();
  }

  setThinking(on) {
    if (on && !this.thinking.isConnected) this.body.append(this.thinking);
    if (!on) this.thinking.remove();
  }

  setStreaming(on) {
    this.el.classList.toggle('streaming', on);
    this.el.setAttribute('aria-busy', on ? 'true' : 'false');
    if (on && this.segments.length === 0) this.setThinking(true);
    if (!on) this.setThinking(false);
  }

  appendText(s) {
    if (!s) return;
    if (!this.text) {
      this.text = { kind: 'text', src: '', el: h('div', { class: 'md' }) };
      this.segments.push(this.text);
      this.body.insertBefore(this.text.el, this.thinking.isConnected ? this.thinking : null);
    }
    this.text.src += s;
    this.scheduleRender();
  }

  scheduleRender() {
    if (this.renderTimer) return;
    // Batching keeps a fast stream (or a replay of hundreds of events) to a few renders a second.
    this.renderTimer = setTimeout(() => this.flush(), 30);
  }

  flush() {
    clearTimeout(this.renderTimer);
    this.renderTimer = 0;
    for (const seg of this.segments) {
      if (seg.kind === 'text' && seg.rendered !== seg.src) {
        seg.el.replaceChildren(renderMarkdown(seg.src));
        seg.rendered = seg.src;
      }
    }
  }

  card(tc) {
    const id = tc.id || '';
    const index = Number.isInteger(tc.index) ? tc.index : 0;
    let card = (id && this.cards.get(id)) || (!id && this.byIndex.get(index)) || null;
    if (!card && id && this.byIndex.has(index) && !this.byIndex.get(index).id) card = this.byIndex.get(index);
    if (!card) {
      card = new ToolCard({ id, name: tc.function && tc.function.name, index });
      this.segments.push({ kind: 'tool', card, el: card.el });
      this.body.insertBefore(card.el, this.thinking.isConnected ? this.thinking : null);
      this.text = null;
    }
    card.setIdentity(id, tc.function && tc.function.name);
    if (card.id) this.cards.set(card.id, card);
    this.byIndex.set(index, card);
    return card;
  }

  findCard(toolCallId, toolName) {
    if (toolCallId && this.cards.has(toolCallId)) return this.cards.get(toolCallId);
    for (const seg of this.segments) {
      if (seg.kind === 'tool' && ['ready', 'running', 'streaming'].includes(seg.card.state) && (!toolName || seg.card.name === toolName)) return seg.card;
    }
    return null;
  }

  /** addReasoning starts (or continues) the current call's reasoning block. */
  addReasoning(text, at) {
    if (!this.reasoning) {
      this.reasoning = new ReasoningBlock({ at });
      this.segments.push({ kind: 'reasoning', el: this.reasoning.el });
      this.body.insertBefore(this.reasoning.el, this.thinking.isConnected ? this.thinking : null);
      this.text = null;
    }
    this.reasoning.append(text);
  }

  /** endReasoning says the model stopped thinking: something else of its call arrived at at. */
  endReasoning(at) {
    if (!this.reasoning) return;
    this.reasoning.finish(at);
    this.reasoning = null;
  }

  /**
   * handle applies one SSE event, logged under id (its SSE id, which tells its time); it returns
   * true for the turn's terminal event.
   */
  handle(type, d, id = '') {
    const at = eventTime(id);
    if (type !== 'reasoning' && type !== 'heartbeat' && type !== 'tool_progress') this.endReasoning(at);
    switch (type) {
      case 'turn_started':
        this.setStreaming(true);
        return false;
      case 'reasoning':
        // What the model writes before its answer: shown as thinking, folded, never as the answer.
        this.setThinking(false);
        this.addReasoning(d.reasoning || '', at);
        return false;
      case 'content':
        this.setThinking(false);
        this.appendText(d.content || '');
        return false;
      case 'tool_call': {
        this.setThinking(false);
        const tc = d.tool_call || {};
        const card = this.card(tc);
        card.setArguments((tc.function && tc.function.arguments) || '', !!(tc.function && tc.function.complete));
        return false;
      }
      case 'tool_start': {
        this.setThinking(false);
        let card = this.findCard(d.tool_call_id, d.tool_name);
        if (!card) card = this.card({ id: d.tool_call_id, function: { name: d.tool_name }, index: -1 - this.segments.length });
        card.setRunning();
        return false;
      }
      case 'tool_progress': {
        const card = this.findCard(d.tool_call_id, d.tool_name);
        if (card) card.progress(d.progress);
        return false;
      }
      case 'tool_end': {
        let card = this.findCard(d.tool_call_id, d.tool_name);
        if (!card) card = this.card({ id: d.tool_call_id, function: { name: d.tool_name }, index: -1 - this.segments.length });
        card.setResult(d.tool_output ?? '');
        // The next LLM call starts after the tools: a retry then only drops what follows.
        this.callStart = this.segments.length;
        this.byIndex.clear();
        this.text = null;
        this.setThinking(this.el.classList.contains('streaming'));
        return false;
      }
      case 'retry':
        this.dropCurrentCall();
        return false;
      case 'approval_required':
      case 'approval_resolved':
        if (d.approval) placeApproval(this.body, this.approvals, d.approval, this.thinking.isConnected ? this.thinking : null);
        this.setThinking(type === 'approval_resolved' && this.el.classList.contains('streaming'));
        return false;
      case 'exercise_checked':
        // The answer to "check" or "hint" typed in the chat came as content just before; this
        // event is for the exercise banner.
        this.setThinking(false);
        return false;
      case 'error':
        this.finish();
        this.body.append(noticeBox('error', d.error || 'The copilot stopped with an error.'));
        if (this.onError) this.onError(d.error || '');
        return true;
      case 'done':
        this.finish();
        if (d.cancelled) this.body.append(noticeBox('stopped', 'Stopped. The answer above is what the copilot had written so far.'));
        return true;
      default:
        return false; // heartbeat and event types this page does not know yet
    }
  }

  /** dropCurrentCall removes the partial output of an LLM call that is being retried. */
  dropCurrentCall() {
    const keep = [];
    this.segments.forEach((seg, i) => {
      const ran = seg.kind === 'tool' && !['streaming', 'ready'].includes(seg.card.state);
      if (i < this.callStart || ran) keep.push(seg);
      else {
        seg.el.remove();
        if (seg.kind === 'tool') {
          this.cards.delete(seg.card.id);
        }
      }
    });
    this.segments = keep;
    this.byIndex.clear();
    this.text = null;
    this.reasoning = null;
    this.setThinking(true);
  }

  finish() {
    this.finished = true;
    this.endReasoning(NaN);
    this.flush();
    this.setStreaming(false);
    for (const seg of this.segments) if (seg.kind === 'tool') seg.card.stop();
    if (this.historyNotice) this.body.append(this.historyNotice);
    this.historyNotice = null;
  }

  /** addHistory applies one stored assistant or tool message. */
  addHistory(m) {
    if (m.role === 'assistant') {
      if (m.reasoning) {
        // A stored answer's thinking is over, and when it started is not kept: the block says
        // only that the model thought.
        this.addReasoning(m.reasoning, NaN);
        this.endReasoning(NaN);
      }
      if (m.content) {
        this.appendText(m.content);
        this.text = null;
      }
      for (const [i, tc] of (m.tool_calls || []).entries()) {
        const fn = tc.function || {};
        const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
        const card = this.card({ id: tc.id, function: { name: fn.name }, index: 10000 + this.segments.length + i });
        card.setArguments(args, true);
      }
      this.byIndex.clear();
      // A turn that failed or was stopped says so after a reload too, below everything it did.
      const meta = m.metadata || {};
      if (meta.error) {
        this.historyNotice = meta.status === 'cancelled'
          ? noticeBox('stopped', 'Stopped. The answer above is what the copilot had written so far.')
          : noticeBox('error', meta.error);
      }
    } else if (m.role === 'tool') {
      let card = m.tool_call_id && this.cards.get(m.tool_call_id);
      if (!card) card = this.card({ id: m.tool_call_id, function: { name: m.name }, index: 20000 + this.segments.length });
      card.setResult(m.content ?? '');
      this.text = null;
    }
  }
}

/** renderHistory turns the history endpoint's messages into conversation elements. */
export function renderHistory(messages) {
  const out = [];
  let turn = null;
  for (const m of messages || []) {
    if (m.role === 'user') {
      if (turn) turn.finish();
      turn = null;
      out.push(userMessage(m.content || ''));
    } else if (m.role === 'assistant' || m.role === 'tool') {
      if (!turn) {
        turn = new AssistantTurn();
        out.push(turn.el);
      }
      turn.addHistory(m);
    }
  }
  if (turn) turn.finish();
  return out;
}
