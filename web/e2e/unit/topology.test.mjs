// Unit tests of the topology picture's model: snapshots, changes, port names and bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TopologyModel, linkState } from '../../static/topology.js';

const pc = (id, name, x, status = 'stopped') => ({
  node_id: id, name, node_type: 'vpcs', status, x, y: 0, width: 60, height: 60,
  ports: [{ name: 'Ethernet0', short_name: 'e0', adapter_number: 0, port_number: 0 }],
});
const link = (id, a, b, capturing = false) => ({
  link_id: id, capturing, suspend: false,
  nodes: [{ node_id: a, adapter_number: 0, port_number: 0, label: '0/0' }, { node_id: b, adapter_number: 0, port_number: 0, label: '0/0' }],
});

test('a snapshot replaces everything and changes apply on top', () => {
  const m = new TopologyModel();
  m.snapshot({ version: 3, project: { name: 'lab' }, nodes: [pc('a', 'PC1', 0), pc('b', 'PC2', 250)], links: [link('l', 'a', 'b')] });
  assert.equal(m.nodes.size, 2);
  assert.equal(m.version, 3);
  assert.deepEqual(m.change({ version: 4, action: 'node.updated', node: pc('a', 'PC1', 0, 'started') }), { kind: 'node', id: 'a', removed: false });
  assert.equal(m.nodes.get('a').status, 'started');
  assert.deepEqual(m.change({ version: 5, action: 'link.updated', link: link('l', 'a', 'b', true) }), { kind: 'link', id: 'l', removed: false });
  assert.equal(m.links.get('l').capturing, true);
  m.change({ version: 6, action: 'node.deleted', node: pc('a', 'PC1', 0) });
  assert.equal(m.nodes.size, 1);
  assert.equal(m.links.size, 0, "a deleted node's links go with it");
  assert.equal(m.version, 6);
  assert.equal(m.change({ version: 7, action: 'ping' }), null);
});

test('link ends are named by the port short name, else the label', () => {
  const m = new TopologyModel();
  m.snapshot({ nodes: [pc('a', 'PC1', 0)], links: [] });
  assert.equal(m.portName({ node_id: 'a', adapter_number: 0, port_number: 0 }), 'e0');
  assert.equal(m.portName({ node_id: 'x', adapter_number: 1, port_number: 2, label: 'Gi1/2' }), 'Gi1/2');
  assert.equal(m.portName({ node_id: 'x', adapter_number: 1, port_number: 2 }), '1/2');
});

test('bounds cover every node at its GNS3 coordinates, with a minimum size', () => {
  const m = new TopologyModel();
  assert.deepEqual(m.bounds(), { x: -200, y: -150, w: 400, h: 300 });
  const nodes = [];
  for (let i = 0; i < 100; i++) nodes.push(pc('n' + i, 'PC' + i, (i % 10) * 150, 'started'));
  for (let i = 0; i < 100; i++) nodes[i].y = Math.floor(i / 10) * 120;
  m.snapshot({ nodes, links: [] });
  const b = m.bounds();
  assert.ok(b.x <= 0 && b.y <= 0, 'top-left node inside');
  assert.ok(b.x + b.w >= 9 * 150 + 60 && b.y + b.h >= 9 * 120 + 60, 'bottom-right node inside');
  assert.deepEqual(m.center(nodes[11]), { x: 150 + 30, y: 120 + 30 });
});

test('a tool card name finds nodes by id or exact name', () => {
  const m = new TopologyModel();
  m.snapshot({ nodes: [pc('a', 'PC1', 0), pc('b', 'PC2', 250)], links: [] });
  assert.deepEqual(m.find('PC2').map((n) => n.node_id), ['b']);
  assert.deepEqual(m.find('a').map((n) => n.node_id), ['a']);
  assert.deepEqual(m.find('pc2'), []);
  assert.deepEqual(m.find(''), []);
});

test('a conditioned or suspended link says so, clipped for the picture', () => {
  const plain = linkState(link('l', 'a', 'b'));
  assert.deepEqual(plain, { capturing: false, suspended: false, conditioned: false, text: '', label: '' });
  const long = 'delay 200 ms ±20 ms, 20 % packet loss; suspended (no packet passes)';
  const s = linkState({ ...link('l', 'a', 'b'), suspend: true, filters: { delay: [200, 20], packet_loss: [20] }, conditions: long });
  assert.equal(s.conditioned, true);
  assert.equal(s.suspended, true);
  assert.equal(s.text, long);
  assert.equal(s.label.length, 40);
  assert.ok(s.label.endsWith('…') && long.startsWith(s.label.slice(0, 39)));
  assert.equal(linkState({ ...link('l', 'a', 'b'), suspend: true, conditions: 'suspended (no packet passes)' }).conditioned, false);
});
