// What a thinking model writes before its answer: shown while it thinks, folded away (a person
// opens it when they want it), and never mixed into the answer. The copilot sends it as
// reasoning events of its own and keeps it beside each stored answer.

import { h } from './dom.js';

/** eventTime reads the time an event was logged from its SSE id ("1700000000000-0"), or NaN. */
export function eventTime(id) {
  const m = /^(\d{10,})-\d+$/.exec(id || '');
  return m ? Number(m[1]) : NaN;
}

/** thoughtLabel says how long a model thought, from the milliseconds it took (NaN: unknown). */
export function thoughtLabel(ms) {
  if (!Number.isFinite(ms) || ms < 0) return 'Thought';
  const s = Math.round(ms / 1000);
  if (s < 1) return 'Thought for a moment';
  if (s < 60) return `Thought for ${s} s`;
  const min = Math.floor(s / 60);
  const rest = s % 60;
  return `Thought for ${min} min` + (rest ? ` ${rest} s` : '');
}

/**
 * ReasoningBlock is one model call's reasoning: a folded details element whose summary says the
 * model is thinking (with a spinner) until finish(), then how long it thought. The text is plain
 * text: it is what a model wrote to itself, not an answer to render.
 */
export class ReasoningBlock {
  /** at: when its first piece was logged (ms, NaN if unknown). */
  constructor({ at = NaN } = {}) {
    this.textNode = document.createTextNode('');
    this.spinner = h('span', { class: 'mini-spinner', 'aria-hidden': 'true' });
    this.label = h('span', { class: 'reasoning-label', text: 'Thinking…' });
    this.el = h(
      'details',
      { class: 'reasoning', dataset: { state: 'thinking' } },
      h('summary', {}, this.spinner, this.label),
      h('div', { class: 'reasoning-text' }, this.textNode),
    );
    // Times come from the events' log ids, so a turn replayed after a reload says how long the
    // model really thought; without them the label just says it did.
    this.startedAt = at;
    this.done = false;
  }

  append(text) {
    if (text) this.textNode.appendData(text);
  }

  get text() {
    return this.textNode.data;
  }

  /** finish says the thinking ended at the time given (ms, NaN if unknown). */
  finish(at = NaN) {
    if (this.done) return;
    this.done = true;
    this.spinner.remove();
    this.label.textContent = thoughtLabel(at - this.startedAt);
    this.el.dataset.state = 'done';
  }
}
