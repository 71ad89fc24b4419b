// Server-Sent Events over fetch(). EventSource cannot POST or send an Authorization header, so
// the page reads the response body itself; SSEParser follows the HTML standard's parsing rules
// (any line ending, comments, multi-line data, id persistence) and has no DOM dependency.

export class SSEParser {
  /** @param {(ev: {id: string, event: string, data: string}) => void} onEvent */
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buf = '';
    this.data = [];
    this.hasData = false;
    this.type = '';
    this.lastEventId = '';
    this.pendingCR = false;
  }

  /** push feeds decoded text; complete events are dispatched synchronously. */
  push(text) {
    if (this.pendingCR && text.startsWith('\n')) text = text.slice(1);
    this.pendingCR = false;
    this.buf += text;
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(this.buf.slice(start, i));
      if (c === '\r') {
        if (i + 1 === this.buf.length) this.pendingCR = true;
        else if (this.buf[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    let field = line;
    let value = '';
    if (colon !== -1) {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
    }
    switch (field) {
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'event':
        this.type = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      default:
        break; // "retry" and unknown fields do not matter to a fetch() reader.
    }
  }

  dispatch() {
    const type = this.type;
    this.type = '';
    if (!this.hasData) return;
    const data = this.data.join('\n');
    this.data = [];
    this.hasData = false;
    this.onEvent({ id: this.lastEventId, event: type || 'message', data });
  }
}

/**
 * readEvents reads an SSE response body to its end, calling onEvent for every event. It resolves
 * when the server closes the stream and rejects if the connection fails or signal aborts.
 */
export async function readEvents(response, onEvent) {
  const parser = new SSEParser(onEvent);
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8');
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    parser.push(decoder.decode());
  } finally {
    reader.releaseLock();
  }
}
