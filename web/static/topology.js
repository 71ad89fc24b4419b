// The lab as GNS3 lays it out: an SVG picture beside the conversation, kept current from the
// copilot's topology stream (a snapshot first, then one change per GNS3 notification). Nodes sit
// at their GNS3 coordinates, coloured by status; links carry their port names, a mark while a
// capture runs, and their conditions (delay, loss, suspension) when GNS3 filters them. Hovering a node's name in a tool card highlights the node. Everything is built
// with createElementNS and textContent: nothing is parsed as markup, and no inline style is set
// (the page's CSP forbids both).

import { request } from './api.js';
import { svg } from './dom.js';
import { readEvents } from './sse.js';

const COLLAPSED_KEY = 'gns3copilot.topology.collapsed';
const NODE_SIZE = 60;
const PAD = 50;

/** TopologyModel is the picture's data: it applies snapshots and changes and says what moved. */
export class TopologyModel {
  constructor() {
    this.project = null;
    this.nodes = new Map();
    this.links = new Map();
    this.version = 0;
  }

  /** snapshot replaces everything. */
  snapshot(d) {
    this.project = d.project || null;
    this.nodes = new Map((d.nodes || []).map((n) => [n.node_id, n]));
    this.links = new Map((d.links || []).map((l) => [l.link_id, l]));
    this.version = d.version || 0;
  }

  /**
   * change applies one topology_change; it returns {kind, id, removed} for the view, or null
   * when the change concerns nothing drawn.
   */
  change(d) {
    if (d.version) this.version = d.version;
    const action = String(d.action || '');
    const removed = action.endsWith('.deleted');
    if (d.node && d.node.node_id) {
      const id = d.node.node_id;
      if (removed) {
        this.nodes.delete(id);
        for (const [lid, l] of this.links) if (l.nodes.some((e) => e.node_id === id)) this.links.delete(lid);
      } else this.nodes.set(id, d.node);
      return { kind: 'node', id, removed };
    }
    if (d.link && d.link.link_id) {
      const id = d.link.link_id;
      if (removed) this.links.delete(id);
      else this.links.set(id, d.link);
      return { kind: 'link', id, removed };
    }
    if (d.project) {
      this.project = d.project;
      return { kind: 'project', id: d.project.project_id, removed: false };
    }
    return null;
  }

  /** portName names a link end by the node's port short name, else its label, else a/p. */
  portName(end) {
    const n = this.nodes.get(end.node_id);
    const p = n && (n.ports || []).find((x) => x.adapter_number === end.adapter_number && x.port_number === end.port_number);
    if (p) return p.short_name || p.name;
    return end.label || `${end.adapter_number}/${end.port_number}`;
  }

  /** center is where a node's symbol sits: GNS3's x/y are its top-left corner. */
  center(n) {
    return { x: n.x + (n.width || NODE_SIZE) / 2, y: n.y + (n.height || NODE_SIZE) / 2 };
  }

  /** bounds is the drawing's extent, padded, never smaller than a small lab's. */
  bounds() {
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (const n of this.nodes.values()) {
      minX = Math.min(minX, n.x);
      minY = Math.min(minY, n.y);
      maxX = Math.max(maxX, n.x + (n.width || NODE_SIZE));
      maxY = Math.max(maxY, n.y + (n.height || NODE_SIZE) + 24);
    }
    if (minX === Infinity) return { x: -200, y: -150, w: 400, h: 300 };
    let w = maxX - minX + 2 * PAD;
    let h = maxY - minY + 2 * PAD;
    let x = minX - PAD;
    let y = minY - PAD;
    if (w < 400) {
      x -= (400 - w) / 2;
      w = 400;
    }
    if (h < 300) {
      y -= (300 - h) / 2;
      h = 300;
    }
    return { x, y, w, h };
  }

  /** find returns the nodes a tool card's text names: by id, else by exact name. */
  find(ref) {
    const r = String(ref || '').trim();
    if (!r) return [];
    if (this.nodes.has(r)) return [this.nodes.get(r)];
    return [...this.nodes.values()].filter((n) => n.name === r);
  }
}

/**
 * linkState says how a link is drawn: capturing, suspended (nothing passes), conditioned (GNS3
 * filters slow it or drop packets), and the copilot's words for its conditions, clipped for the
 * picture (the full words are the link's tooltip).
 */
export function linkState(l) {
  const text = String(l.conditions || '');
  return {
    capturing: !!l.capturing,
    suspended: !!l.suspend,
    conditioned: Object.keys(l.filters || {}).length > 0,
    text,
    label: text.length > 40 ? `${text.slice(0, 39)}…` : text,
  };
}

function title(text) {
  const t = svg('title');
  t.textContent = text;
  return t;
}

const STATUS_TEXT = { started: 'started', stopped: 'stopped', suspended: 'suspended' };

/** TopologyPanel draws a TopologyModel into the page's topology aside and follows the stream. */
export class TopologyPanel {
  /** @param {HTMLElement} root the <aside id="topology"> element; @param {HTMLElement} conversation */
  constructor(root, conversation) {
    this.root = root;
    this.model = new TopologyModel();
    this.nodeEls = new Map();
    this.linkEls = new Map();
    this.projectId = '';
    this.controller = null;
    this.toggle = root.querySelector('#topology-toggle');
    this.body = root.querySelector('#topology-body');
    this.status = root.querySelector('#topology-status');
    this.summary = root.querySelector('#topology-summary');
    this.svg = svg('svg', { class: 'topo-svg', role: 'img', 'aria-labelledby': 'topology-svg-title' });
    this.svgTitle = svg('title', { id: 'topology-svg-title' });
    this.svgTitle.textContent = 'Lab topology';
    this.linksG = svg('g', { class: 'topo-links' });
    this.nodesG = svg('g', { class: 'topo-nodes' });
    this.svg.append(this.svgTitle, this.linksG, this.nodesG);
    root.querySelector('#topology-canvas').append(this.svg);
    this.view = null; // the user's zoom and pan; null follows the lab's bounds
    this.enableZoom();
    this.setCollapsed(localStorage.getItem(COLLAPSED_KEY) === '1');
    this.toggle.addEventListener('click', () => this.setCollapsed(this.toggle.getAttribute('aria-expanded') === 'true'));
    if (conversation) this.watchToolCards(conversation);
  }

  setCollapsed(collapsed) {
    this.toggle.setAttribute('aria-expanded', collapsed ? 'false' : 'true');
    this.toggle.textContent = collapsed ? 'Show lab' : 'Hide lab';
    this.body.hidden = collapsed;
    this.root.classList.toggle('collapsed', collapsed);
    localStorage.setItem(COLLAPSED_KEY, collapsed ? '1' : '0');
  }

  /** follow shows projectId's topology live; '' stops following and hides the panel. */
  follow(projectId) {
    if (projectId === this.projectId && this.controller) return;
    if (this.controller) this.controller.abort();
    this.controller = null;
    this.projectId = projectId;
    this.model = new TopologyModel();
    this.view = null;
    this.redraw();
    this.root.hidden = !projectId;
    if (!projectId) return;
    this.controller = new AbortController();
    this.run(projectId, this.controller.signal);
  }

  setStatus(state, text) {
    this.status.dataset.state = state;
    this.status.textContent = text;
  }

  async run(projectId, signal) {
    let wait = 500;
    while (!signal.aborted) {
      try {
        this.setStatus('connecting', 'connecting…');
        const res = await request('GET', `/v3/projects/${encodeURIComponent(projectId)}/chat/topology/stream`, { raw: true, signal });
        await readEvents(res, (ev) => {
          if (!signal.aborted) this.onEvent(ev);
        });
      } catch (err) {
        if (signal.aborted) return;
        if (err && (err.status === 401 || err.status === 403 || err.status === 404)) {
          this.setStatus('off', err.message || 'unavailable');
          return;
        }
      }
      if (signal.aborted) return;
      this.setStatus('connecting', 'reconnecting…');
      await new Promise((resolve) => {
        const t = setTimeout(resolve, wait);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        }, { once: true });
      });
      wait = Math.min(wait * 2, 10000);
    }
  }

  onEvent(ev) {
    let d;
    try {
      d = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (ev.event === 'topology_snapshot') {
      this.model.snapshot(d);
      this.redraw();
      this.setStatus(d.live ? 'live' : 'direct', d.live ? 'live' : 'read from GNS3');
    } else if (ev.event === 'topology_change') {
      const c = this.model.change(d);
      if (!c) return;
      if (c.kind === 'node') {
        if (c.removed) this.redraw();
        else {
          this.drawNode(this.model.nodes.get(c.id));
          for (const l of this.model.links.values()) if (l.nodes.some((e) => e.node_id === c.id)) this.drawLink(l);
        }
      } else if (c.kind === 'link') {
        if (c.removed) {
          const el = this.linkEls.get(c.id);
          if (el) el.remove();
          this.linkEls.delete(c.id);
        } else this.drawLink(this.model.links.get(c.id));
      }
      this.fit();
      this.setStatus('live', 'live');
    } else if (ev.event === 'error') {
      this.setStatus('off', d.error || 'the topology can no longer be read');
    }
  }

  redraw() {
    for (const el of this.nodeEls.values()) el.remove();
    for (const el of this.linkEls.values()) el.remove();
    this.nodeEls.clear();
    this.linkEls.clear();
    for (const n of this.model.nodes.values()) this.drawNode(n);
    for (const l of this.model.links.values()) this.drawLink(l);
    this.fit();
  }

  fit() {
    const b = this.view || this.model.bounds();
    this.svg.setAttribute('viewBox', `${b.x} ${b.y} ${b.w} ${b.h}`);
    const nodes = this.model.nodes.size;
    const links = this.model.links.size;
    this.root.dataset.nodes = String(nodes);
    this.root.dataset.links = String(links);
    this.summary.textContent = `${nodes} node${nodes === 1 ? '' : 's'} · ${links} link${links === 1 ? '' : 's'}`;
    this.svgTitle.textContent = `Lab topology: ${this.summary.textContent}`;
    // Big labs get smaller marks so a hundred nodes stay readable.
    this.svg.classList.toggle('dense', nodes > 30);
  }

  drawNode(n) {
    const old = this.nodeEls.get(n.node_id);
    const w = n.width || NODE_SIZE;
    const h = n.height || NODE_SIZE;
    const status = STATUS_TEXT[n.status] ? n.status : 'unknown';
    const label = svg('text', { class: 'topo-node-label', x: n.x + w / 2, y: n.y + h + 16, 'text-anchor': 'middle' });
    label.textContent = n.name;
    const g = svg(
      'g',
      { class: 'topo-node', 'data-node-id': n.node_id, 'data-name': n.name, 'data-status': status },
      title(`${n.name} (${n.node_type || 'node'}): ${STATUS_TEXT[n.status] || n.status || 'status unknown'}`),
      svg('rect', { class: 'topo-node-box', x: n.x + 6, y: n.y + 6, width: w - 12, height: h - 12, rx: 10 }),
      svg('circle', { class: 'topo-node-lamp', cx: n.x + w - 10, cy: n.y + 10, r: 7 }),
      label,
    );
    if (old) {
      if (old.classList.contains('topo-hl')) g.classList.add('topo-hl');
      old.replaceWith(g);
    } else this.nodesG.append(g);
    this.nodeEls.set(n.node_id, g);
  }

  drawLink(l) {
    const old = this.linkEls.get(l.link_id);
    const ends = (l.nodes || []).map((e) => ({ e, n: this.model.nodes.get(e.node_id) }));
    if (ends.length !== 2 || !ends[0].n || !ends[1].n) {
      if (old) old.remove();
      this.linkEls.delete(l.link_id);
      return;
    }
    const a = this.model.center(ends[0].n);
    const b = this.model.center(ends[1].n);
    const len = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const at = (p, q, d) => ({ x: p.x + ((q.x - p.x) * d) / len, y: p.y + ((q.y - p.y) * d) / len });
    const off = Math.min(48, len / 3);
    const pa = at(a, b, off);
    const pb = at(b, a, off);
    const portA = this.model.portName(ends[0].e);
    const portB = this.model.portName(ends[1].e);
    const textA = svg('text', { class: 'topo-port', x: pa.x, y: pa.y - 4, 'text-anchor': 'middle' });
    textA.textContent = portA;
    const textB = svg('text', { class: 'topo-port', x: pb.x, y: pb.y - 4, 'text-anchor': 'middle' });
    textB.textContent = portB;
    const st = linkState(l);
    const g = svg(
      'g',
      {
        class: 'topo-link',
        'data-link-id': l.link_id,
        'data-capturing': st.capturing ? 'true' : 'false',
        'data-suspended': st.suspended ? 'true' : 'false',
        'data-conditioned': st.conditioned ? 'true' : 'false',
      },
      title(`${ends[0].n.name} ${portA} — ${ends[1].n.name} ${portB}${st.capturing ? ' (capturing)' : ''}${st.text ? ` — ${st.text}` : ''}`),
      svg('line', { class: 'topo-link-line', x1: a.x, y1: a.y, x2: b.x, y2: b.y }),
      textA,
      textB,
    );
    const m = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
    if (st.capturing) {
      g.append(svg('g', { class: 'topo-capture' }, title('capturing packets'), svg('circle', { cx: m.x, cy: m.y, r: 9 }), svg('circle', { class: 'topo-capture-lens', cx: m.x, cy: m.y, r: 4 })));
    }
    if (st.label) {
      const cond = svg('text', { class: 'topo-condition', x: m.x, y: m.y + 22, 'text-anchor': 'middle' });
      cond.textContent = st.label;
      g.append(cond);
    }
    if (old) old.replaceWith(g);
    else this.linksG.append(g);
    this.linkEls.set(l.link_id, g);
  }

  /**
   * enableZoom lets a big lab be read closely: the wheel zooms around the pointer, dragging
   * pans, a double click fits the whole lab again.
   */
  enableZoom() {
    const toLab = (e) => {
      const r = this.svg.getBoundingClientRect();
      const b = this.view || this.model.bounds();
      const scale = Math.max(b.w / r.width, b.h / r.height);
      // preserveAspectRatio centres the box: offset by half the unused space.
      const ox = (r.width * scale - b.w) / 2;
      const oy = (r.height * scale - b.h) / 2;
      return { x: b.x - ox + (e.clientX - r.left) * scale, y: b.y - oy + (e.clientY - r.top) * scale, scale };
    };
    this.svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      const b = this.view || this.model.bounds();
      const p = toLab(e);
      const f = e.deltaY > 0 ? 1.2 : 1 / 1.2;
      const w = Math.min(Math.max(b.w * f, 120), 40000);
      const k = w / b.w;
      this.view = { x: p.x - (p.x - b.x) * k, y: p.y - (p.y - b.y) * k, w, h: b.h * k };
      this.fit();
    }, { passive: false });
    let drag = null;
    this.svg.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, b: { ...(this.view || this.model.bounds()) }, scale: toLab(e).scale };
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (!drag || !(e.buttons & 1)) return;
      const { b, scale } = drag;
      this.view = { x: b.x - (e.clientX - drag.x) * scale, y: b.y - (e.clientY - drag.y) * scale, w: b.w, h: b.h };
      this.fit();
    });
    this.svg.addEventListener('pointerup', () => {
      drag = null;
    });
    this.svg.addEventListener('dblclick', () => {
      this.view = null;
      this.fit();
    });
  }

  /** highlight marks the nodes ref names (a node name or id), or clears every mark. */
  highlight(ref) {
    for (const el of this.nodesG.querySelectorAll('.topo-hl')) el.classList.remove('topo-hl');
    let found = false;
    for (const n of this.model.find(ref)) {
      const el = this.nodeEls.get(n.node_id);
      if (el) {
        el.classList.add('topo-hl');
        // Drawn last, so the mark is not hidden under a neighbour.
        this.nodesG.append(el);
        found = true;
      }
    }
    return found;
  }

  /** watchToolCards highlights a node while the pointer rests on its name in a tool card. */
  watchToolCards(conversation) {
    const nameOf = (target) => {
      const el = target instanceof Element ? target.closest('.tool-card .item-name, .tool-card .item-id') : null;
      return el ? el : null;
    };
    conversation.addEventListener('mouseover', (e) => {
      const el = nameOf(e.target);
      if (!el) return;
      el.classList.toggle('topo-ref', this.highlight(el.textContent));
    });
    conversation.addEventListener('mouseout', (e) => {
      const el = nameOf(e.target);
      if (el && !(e.relatedTarget instanceof Node && el.contains(e.relatedTarget))) this.highlight('');
    });
  }
}
