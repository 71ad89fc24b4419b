// The running turn's record in this tab: its question, its events (compacted, each with its log
// id, which tells its time) and the last event id, kept in sessionStorage so that after a reload the page shows what it had at once
// and rejoins the turn after the last event it saw.

import { KEYS, state } from './page.js';

/** readLive is this tab's record of a running turn, or null; whatever storage held is checked. */
export function readLive() {
  try {
    const v = JSON.parse(sessionStorage.getItem(KEYS.live) || 'null');
    if (!v || typeof v !== 'object' || !Array.isArray(v.events)) return null;
    v.events = v.events.filter((e) => Array.isArray(e) && typeof e[0] === 'string' && e[1] && typeof e[1] === 'object');
    v.message = typeof v.message === 'string' ? v.message : '';
    v.lastEventId = typeof v.lastEventId === 'string' ? v.lastEventId : '';
    v.turnId = typeof v.turnId === 'string' ? v.turnId : '';
    return v;
  } catch {
    return null;
  }
}

export function clearLive() {
  sessionStorage.removeItem(KEYS.live);
}

/** recordLive adds one event to ctx's record and saves it soon (a burst of events is saved once). */
export function recordLive(ctx, type, d, id) {
  const events = ctx.live.events;
  const last = events[events.length - 1];
  if ((type === 'content' || type === 'reasoning') && last && last[0] === type) {
    // A run of text is kept as one event under its first piece's id: the start of a reasoning
    // block is what the replay needs of it, to say how long the model thought.
    last[1] = { ...last[1], [type]: (last[1][type] || '') + (d[type] || '') };
  } else if (type === 'tool_call' && d.tool_call && d.tool_call.id) {
    // Arguments accumulate: only the latest frame of a call matters.
    const k = events.findIndex((e) => e[0] === 'tool_call' && e[1].tool_call && e[1].tool_call.id === d.tool_call.id);
    if (k >= 0 && k === events.length - 1) events[k] = [type, d, id];
    else events.push([type, d, id]);
  } else {
    events.push([type, d, id]);
  }
  ctx.live.lastEventId = id || ctx.live.lastEventId;
  if (!ctx.persistTimer) {
    ctx.persistTimer = setTimeout(() => {
      ctx.persistTimer = 0;
      if (state.stream === ctx) persistLive(ctx);
    }, 200);
  }
}

/** persistLive saves ctx's record now. */
export function persistLive(ctx) {
  if (!ctx.live || !ctx.live.sessionId) return;
  try {
    sessionStorage.setItem(KEYS.live, JSON.stringify(ctx.live));
  } catch {
    // Too big for this tab's storage: keep only where to rejoin; a reload then replays the turn.
    try {
      sessionStorage.setItem(KEYS.live, JSON.stringify({ ...ctx.live, events: [], lastEventId: '' }));
    } catch {
      clearLive();
    }
  }
}

window.addEventListener('pagehide', () => {
  if (state.stream && state.stream.live) persistLive(state.stream);
});
