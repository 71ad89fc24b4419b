// The message box under the conversation and its buttons: Send, Stop while a turn runs, and
// Inject fault (the copilot breaks the lab on purpose, for troubleshooting practice).

import { $, state } from './page.js';

export const composer = {
  form: $('composer'),
  input: $('composer-input'),
  send: $('send'),
  stop: $('stop'),
  inject: $('inject'),
};

/** The message of an inject request when the box is empty, as GNS3's own copilot words it. */
export const INJECT_MESSAGE = 'Inject a network fault for troubleshooting practice';

/**
 * wireComposer connects the box: Enter (without Shift) or Send calls send(), Inject fault calls
 * send(text, true), Stop calls stop().
 */
export function wireComposer({ send, stop }) {
  composer.form.addEventListener('submit', (e) => {
    e.preventDefault();
    send();
  });
  composer.input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  composer.stop.addEventListener('click', () => stop());
  composer.inject.addEventListener('click', () => send(composer.input.value, true));
}

export function setComposerEnabled(on) {
  composer.input.disabled = !on;
  composer.send.disabled = !on || !!state.stream;
  composer.inject.disabled = composer.send.disabled;
}

/** setBusy swaps Send for Stop while a turn runs; Stop waits until the turn's session is known. */
export function setBusy(on) {
  composer.send.hidden = on;
  composer.send.disabled = on;
  composer.inject.disabled = on;
  composer.stop.hidden = !on;
  composer.stop.disabled = on && !(state.stream && state.stream.sessionId);
  composer.stop.textContent = 'Stop';
  composer.form.classList.toggle('busy', on);
}

/** setStopping shows that a stop was asked (on) or that it failed and may be asked again. */
export function setStopping(on) {
  composer.stop.disabled = on;
  composer.stop.textContent = on ? 'Stopping…' : 'Stop';
}
