// The exercise banner: after the copilot injected a fault into the lab for troubleshooting
// practice, the session shows the exercise's state (open, hints used, fixed, given up, expired)
// with Check and Hint buttons. It never knows the fault: the API tells the student only how the
// exercise stands and what a check or a hint answered.

import { request } from './api.js';
import { h } from './dom.js';

const enc = encodeURIComponent;

/** describeExercise is the banner's one-line state of an exercise. */
export function describeExercise(ex) {
  if (!ex) return '';
  const hints = ex.hints_used === 1 ? '1 hint used' : `${ex.hints_used || 0} hints used`;
  const checks = ex.checks === 1 ? '1 check' : `${ex.checks || 0} checks`;
  switch (ex.status) {
    case 'open':
      return `Troubleshooting exercise open: a fault was injected into this lab. ${checks}, ${hints}.`;
    case 'fixed':
      return `Exercise fixed after ${checks} and ${hints}. Well done!`;
    case 'given_up':
      return `Exercise given up (${checks}, ${hints}).`;
    case 'expired':
      return `Exercise expired (${checks}, ${hints}).`;
    default:
      return String(ex.status || '');
  }
}

/** ExerciseBanner shows one session's exercise in el, which it fills. */
export class ExerciseBanner {
  constructor(el) {
    this.el = el;
    this.projectId = '';
    this.sessionId = '';
    this.ex = null;
    this.stateEl = h('p', { class: 'exercise-state', role: 'status' });
    this.answerEl = h('p', { class: 'exercise-answer', 'aria-live': 'polite', hidden: true });
    this.checkBtn = h('button', { type: 'button', class: 'primary exercise-check', text: 'Check', onclick: () => this.ask('check') });
    this.hintBtn = h('button', { type: 'button', class: 'exercise-hint', text: 'Hint', onclick: () => this.ask('hint') });
    this.actions = h('div', { class: 'exercise-actions' }, this.checkBtn, this.hintBtn);
    el.append(this.stateEl, this.answerEl, this.actions);
    el.hidden = true;
  }

  setProject(id) {
    this.projectId = id || '';
  }

  path(rest) {
    return `/v3/projects/${enc(this.projectId)}/chat/sessions/${enc(this.sessionId)}/exercise${rest}`;
  }

  /**
   * select makes the banner about another session, hidden until load or an event fills it: the
   * page switches sessions before it reads their history, and showing that history loads it.
   */
  select(sessionId) {
    this.sessionId = sessionId || '';
    this.show(null);
  }

  /** shows tells whether the banner holds an exercise of this session (from load or an event). */
  shows(sessionId) {
    return !!this.ex && !!sessionId && this.sessionId === sessionId;
  }

  /**
   * load shows the session's latest exercise. The page calls it only for a session known to have
   * one (the session list's has_exercise, or an exercise event), so the request is not expected
   * to fail.
   */
  async load(sessionId) {
    this.select(sessionId);
    if (!this.projectId || !this.sessionId) return;
    const asked = this.sessionId;
    try {
      const ex = await request('GET', this.path(''));
      if (asked === this.sessionId) this.show(ex);
    } catch {
      /* it cannot be read now (or was deleted with its session): no banner */
    }
  }

  /** show updates the banner with an exercise of the current session (null hides it). */
  show(ex, answer = '') {
    if (ex && ex.session_id && this.sessionId && ex.session_id !== this.sessionId) return;
    this.ex = ex;
    this.el.hidden = !ex;
    if (!ex) {
      this.answerEl.textContent = '';
      this.answerEl.hidden = true;
      return;
    }
    this.el.dataset.status = ex.status;
    this.stateEl.textContent = describeExercise(ex);
    this.actions.hidden = ex.status !== 'open';
    if (answer) {
      this.answerEl.textContent = answer;
      this.answerEl.hidden = false;
    } else if (ex.last_check && !this.answerEl.textContent) {
      this.answerEl.textContent = ex.last_check;
      this.answerEl.hidden = false;
    }
  }

  /** event applies an exercise_started or exercise_checked event of the current session. */
  event(d) {
    if (!d || !d.exercise) return;
    if (!this.sessionId && d.session_id) this.sessionId = d.session_id;
    this.show(d.exercise, d.type === 'exercise_checked' ? d.content || '' : '');
  }

  async ask(what) {
    this.checkBtn.disabled = this.hintBtn.disabled = true;
    if (what === 'check') {
      this.answerEl.textContent = 'Checking the lab…';
      this.answerEl.hidden = false;
    }
    try {
      const ans = await request('POST', this.path('/' + what));
      this.show(ans.exercise, ans.hint ? `Hint: ${ans.hint} ${ans.message}` : ans.message);
    } catch (err) {
      this.answerEl.textContent = err.message || String(err);
      this.answerEl.hidden = false;
      if (err.status === 409) this.load(this.sessionId);
    } finally {
      this.checkBtn.disabled = this.hintBtn.disabled = false;
    }
  }
}
