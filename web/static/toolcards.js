// A tool call as the user sees it: the arguments filling in while the model streams them, a
// spinner with per-node/per-device progress while the tool runs, then the result in the
// standard format (summary line and one row per item). Device output is text, always.

import { h, clear } from './dom.js';
import { captureView } from './capturecard.js';

const LONG_LINES = 12;
const LONG_CHARS = 1200;

/** parseToolOutput decodes a tool_output string; it returns {standard, value, raw}. */
export function parseToolOutput(output) {
  let value = output;
  if (typeof output === 'string') {
    try {
      value = JSON.parse(output);
    } catch {
      return { standard: false, value: null, raw: output };
    }
  }
  const standard =
    value !== null && typeof value === 'object' && !Array.isArray(value) && ('success' in value || Array.isArray(value.data));
  return { standard, value, raw: typeof output === 'string' ? output : JSON.stringify(output, null, 2) };
}

/** itemState maps an item's status to ok, partial (ran, but some commands were blocked), failed or unknown. */
export function itemState(status) {
  const s = String(status || '').toLowerCase();
  if (['success', 'succeeded', 'ok', 'started', 'done', 'completed'].includes(s)) return 'ok';
  if (['partial_success', 'partial'].includes(s)) return 'partial';
  if (['failed', 'failure', 'error', 'aborted', 'timeout'].includes(s)) return 'failed';
  return 'unknown';
}

const MARKS = {
  ok: { sign: '✓', label: 'succeeded' },
  failed: { sign: '✗', label: 'failed' },
  partial: { sign: '!', label: 'partly succeeded' },
  unknown: { sign: '?', label: 'status unknown' },
};

function mark(state) {
  const m = MARKS[state];
  return h('span', { class: 'mark mark-' + state }, h('span', { 'aria-hidden': 'true', text: m.sign }), h('span', { class: 'visually-hidden', text: m.label }));
}

function asText(v) {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  return JSON.stringify(v, null, 2);
}

/** outputBlock shows text in a monospace block, folded behind a summary when it is long. */
export function outputBlock(text, label = 'Output', cls = '') {
  const pre = h('pre', { class: 'mono ' + cls, tabindex: '0' });
  pre.textContent = text;
  const lines = text.split('\n').length;
  if (lines <= LONG_LINES && text.length <= LONG_CHARS) return pre;
  return h('details', { class: 'long-output' }, h('summary', { text: `${label} — ${lines} line${lines === 1 ? '' : 's'}` }), pre);
}

function prettyArgs(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const STATE_TEXT = {
  streaming: 'Preparing…',
  ready: 'Ready to run',
  running: 'Running…',
  done: 'Done',
  partial: 'Finished with failures',
  partly: 'Partly done',
  failed: 'Failed',
  stopped: 'Stopped',
};

export class ToolCard {
  constructor({ id = '', name = '', index = 0 } = {}) {
    this.id = id;
    this.name = name;
    this.index = index;
    this.state = 'streaming';
    this.progressRows = new Map();
    this.nameEl = h('span', { class: 'tool-name', text: name || 'tool' });
    this.stateEl = h('span', { class: 'tool-state', text: STATE_TEXT.streaming });
    this.spinner = h('span', { class: 'spinner', 'aria-hidden': 'true' });
    this.argsPre = h('pre', { class: 'mono tool-args-text', tabindex: '0' });
    this.args = h('details', { class: 'tool-args', open: true }, h('summary', { text: 'Arguments' }), this.argsPre);
    this.progressEl = h('ul', { class: 'tool-progress', 'aria-label': 'Progress', hidden: true });
    this.progressSummary = h('p', { class: 'tool-progress-summary', hidden: true });
    this.resultEl = h('div', { class: 'tool-result', hidden: true });
    this.el = h(
      'section',
      { class: 'tool-card', dataset: { state: 'streaming', toolCallId: id }, 'aria-label': 'Tool call ' + (name || '') },
      h('header', { class: 'tool-head' }, h('span', { class: 'tool-kind', text: 'Tool' }), this.nameEl, this.spinner, this.stateEl),
      this.args,
      this.progressSummary,
      this.progressEl,
      this.resultEl,
    );
  }

  setState(state) {
    this.state = state;
    this.el.dataset.state = state;
    this.stateEl.textContent = STATE_TEXT[state] || state;
  }

  setIdentity(id, name) {
    if (id && !this.id) {
      this.id = id;
      this.el.dataset.toolCallId = id;
    }
    if (name && name !== this.name) {
      this.name = name;
      this.nameEl.textContent = name;
      this.el.setAttribute('aria-label', 'Tool call ' + name);
    }
  }

  setArguments(text, complete) {
    this.argsText = text || '';
    this.argsPre.textContent = complete ? prettyArgs(this.argsText) : this.argsText;
    if (complete && this.state === 'streaming') this.setState('ready');
  }

  setRunning() {
    if (this.state === 'streaming' || this.state === 'ready') this.setState('running');
  }

  /** progress shows per-node or per-device progress; it accepts one entry, a list, or {items}. */
  progress(p) {
    if (p === null || p === undefined) return;
    if (this.state !== 'running') this.setRunning();
    let entries = [p];
    if (Array.isArray(p)) entries = p;
    else if (p && typeof p === 'object') {
      const list = p.items || p.nodes || p.devices;
      if (Array.isArray(list)) {
        // A wrapper around per-item entries may carry an overall count and message.
        entries = list;
        const parts = [];
        if (typeof p.total === 'number') parts.push(`${p.done ?? p.completed ?? 0} of ${p.total}`);
        if (p.message) parts.push(String(p.message));
        this.progressSummary.textContent = parts.join(' — ');
        this.progressSummary.hidden = parts.length === 0;
      }
    } else {
      entries = [{ message: String(p) }];
    }
    for (const e of entries) {
      if (e === null || typeof e !== 'object') continue;
      const key = String(e.item_id ?? e.id ?? e.node_id ?? e.device_id ?? e.item_name ?? e.name ?? e.node ?? e.device ?? e.node_name ?? '');
      const label = String(e.item_name ?? e.name ?? e.node_name ?? e.device_name ?? e.node ?? e.device ?? e.item_id ?? e.id ?? '');
      const status = String(e.status ?? e.state ?? '');
      const message = e.message ?? e.detail ?? e.error ?? '';
      if (!key && !label && !message) continue;
      let row = this.progressRows.get(key || message);
      if (!row) {
        row = h('li', { class: 'progress-row' });
        this.progressRows.set(key || message, row);
        this.progressEl.append(row);
      }
      clear(row);
      const state = itemState(status);
      const busy = state === 'unknown';
      row.dataset.state = busy ? 'busy' : state;
      row.append(busy ? h('span', { class: 'mini-spinner', 'aria-hidden': 'true' }) : mark(state), h('span', { class: 'item-name', text: label || 'progress' }));
      if (status) row.append(h('span', { class: 'item-status', text: status }));
      if (message) row.append(h('span', { class: 'item-message', text: String(message) }));
      this.progressEl.hidden = false;
    }
  }

  setResult(output) {
    const parsed = parseToolOutput(output);
    clear(this.resultEl);
    this.resultEl.hidden = false;
    this.progressEl.hidden = true;
    this.progressSummary.hidden = true;
    // Short arguments stay in view beside their result; long ones fold away.
    this.args.open = this.argsPre.textContent.split('\n').length <= 4;
    if (!parsed.standard) {
      this.resultEl.append(outputBlock(parsed.raw || '(no output)'));
      this.setState('done');
      return;
    }
    const r = parsed.value;
    const data = Array.isArray(r.data) ? r.data : [];
    const total = Number.isFinite(r.total) ? r.total : data.length;
    const ok = Number.isFinite(r.successful) ? r.successful : data.filter((d) => itemState(d && d.status) === 'ok').length;
    // The standard format counts a partial success among the failed; the card shows it apart.
    const partly = data.filter((d) => d && itemState(d.status) === 'partial').length;
    const counted = Number.isFinite(r.failed) ? r.failed : data.filter((d) => itemState(d && d.status) === 'failed').length + partly;
    const bad = Math.max(0, counted - partly);
    const secs = r.metadata && Number(r.metadata.execution_time);
    this.resultEl.append(
      h(
        'p',
        { class: 'tool-summary' },
        h('span', { class: 'sum-total', text: `${total} total` }),
        h('span', { class: 'sum-ok', text: `${ok} successful` }),
        h('span', { class: 'sum-failed' + (bad ? ' has-failed' : ''), text: `${bad} failed` }),
        partly ? h('span', { class: 'sum-partial', text: `${partly} partly` }) : null,
        Number.isFinite(secs) && secs > 0 ? h('span', { class: 'sum-time', text: secs < 1 ? `${Math.round(secs * 1000)} ms` : `${secs.toFixed(1)} s` }) : null,
      ),
    );
    if (r.success === false && r.error) {
      this.resultEl.append(h('p', { class: 'tool-error', role: 'note' }, mark('failed'), h('span', { text: asText(r.error) })));
    }
    const extra = r.metadata && r.metadata.capture ? captureView(r.metadata.capture) : null;
    if (extra) this.resultEl.append(extra);
    if (data.length) {
      const list = h('ul', { class: 'tool-items' });
      for (const item of data) {
        if (item === null || typeof item !== 'object') {
          list.append(h('li', { class: 'tool-item', dataset: { state: 'unknown' } }, mark('unknown'), outputBlock(asText(item))));
          continue;
        }
        const state = itemState(item.status);
        const text = state === 'failed' ? asText(item.error ?? item.result) : asText(item.result ?? item.error);
        // A partial success has both: the output of what ran and why the rest was not sent.
        const note = state === 'partial' && item.result && item.error ? asText(item.error) : '';
        const name = asText(item.name) || asText(item.id) || '(unnamed)';
        const li = h(
          'li',
          { class: 'tool-item', dataset: { state } },
          h('div', { class: 'item-line' }, mark(state), h('span', { class: 'item-name', text: name }), item.id && item.id !== item.name ? h('span', { class: 'item-id', text: asText(item.id) }) : null),
        );
        if (text) li.append(outputBlock(text, state === 'failed' ? 'Error' : 'Output', state === 'failed' ? 'is-error' : ''));
        if (note) li.append(h('p', { class: 'item-note' }, mark('partial'), h('span', { text: note })));
        list.append(li);
      }
      this.resultEl.append(list);
    }
    if (bad === 0 && partly > 0) this.setState('partly');
    else this.setState(r.success === false ? (ok + partly > 0 ? 'partial' : 'failed') : bad > 0 ? 'partial' : 'done');
  }

  /** stop marks a card whose tool never finished because the turn ended. */
  stop() {
    if (['streaming', 'ready', 'running'].includes(this.state)) {
      this.progressEl.hidden = true;
      this.setState('stopped');
    }
  }
}
