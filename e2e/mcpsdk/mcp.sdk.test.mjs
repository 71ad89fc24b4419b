// The official MCP TypeScript SDK as an MCP host would use it, against the copilot's /mcp and
// real VPCS. Started by TestMCPWithTheTypeScriptSDK (e2e/mcp_sdk_test.go), which gives the
// copilot's address, the users' credentials and a control server (a PC's address read from its
// console; the API key revoked). Without COPILOT_URL the tests are skipped.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const URL_ = process.env.COPILOT_URL;
const TOKEN = process.env.COPILOT_TOKEN;
const BOB = process.env.COPILOT_BOB_TOKEN;
const KEY = process.env.COPILOT_API_KEY;
const PROJECT = process.env.COPILOT_PROJECT_ID;
const CONTROL = process.env.COPILOT_CONTROL_URL;
const skip = URL_ ? false : 'COPILOT_URL is not set: run these through `go test ./e2e -run TestMCPWithTheTypeScriptSDK`';

const opened = [];

/** connect opens an MCP session; elicit, when given, answers the server's questions. */
async function connect(token, { elicit, headers = {} } = {}) {
  const client = new Client({ name: 'ts-sdk-agent', version: '1.0.0' }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', URL_), {
    requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } },
  });
  await client.connect(transport);
  opened.push(client);
  return client;
}

/** call calls a tool and returns its standard result, checking text and structured content agree. */
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const fromText = JSON.parse(res.content[0].text);
  assert.deepEqual(res.structuredContent, fromText);
  assert.equal(res.isError ?? false, !fromText.success, res.content[0].text);
  return { res, out: fromText };
}

const ipCall = (device, ip) => ({ project_id: PROJECT, device_configs: [{ device_name: device, commands: [`ip ${ip}/24`] }] });

async function showIP(name) {
  const r = await fetch(`${CONTROL}/show-ip/${name}`);
  assert.equal(r.status, 200);
  return r.text();
}

/** pending checks a two-phase answer and returns its approval. */
function pending(res, out) {
  assert.equal(res._meta?.status, 'waiting_approval', JSON.stringify(out));
  assert.ok(out.data.every((d) => d.status === 'waiting_approval'), JSON.stringify(out.data));
  const a = out.metadata.approval;
  assert.ok(a.approval_id && a.expires_at && a.question, JSON.stringify(a));
  assert.match(out.metadata.next_step, /Nothing was applied/);
  assert.match(out.metadata.next_step, /decide_approval/);
  return a;
}

describe('the copilot through the official MCP TypeScript SDK', { skip, timeout: 420000 }, () => {
  test('without elicitation: the plan at once, then decide_approval approves', async () => {
    const c = await connect(TOKEN);
    const began = Date.now();
    const { res, out } = await call(c, 'execute_vpcs_commands', ipCall('PC1', '10.7.0.1'));
    const answered = Date.now() - began;
    console.log(`a configuration call without elicitation answered with its plan in ${answered} ms`);
    assert.ok(answered < 30000, `answered in ${answered} ms`);
    const a = pending(res, out);
    assert.match(out.data[0].result, /ip 10\.7\.0\.1\/24 {4}\[change\]/);
    assert.match(out.data[0].result, /current configuration \(show ip\)/);
    assert.match(a.question, /\*\*PC1\*\* \(vpcs\)/);
    assert.doesNotMatch(await showIP('PC1'), /10\.7\.0\.1/, 'nothing was applied');

    const decided = await call(c, 'decide_approval', { approval_id: a.approval_id, decision: 'approve' });
    assert.equal(decided.out.success, true, JSON.stringify(decided.out));
    assert.match(decided.out.data[0].result, /10\.7\.0\.1/);
    assert.equal(decided.res._meta.call_id, res._meta.call_id, "the call's own result");
    assert.match(await showIP('PC1'), /10\.7\.0\.1\/24/);
  });

  test('reject with a comment: nothing sent, the comment comes back', async () => {
    const c = await connect(TOKEN);
    const { res, out } = await call(c, 'execute_vpcs_commands', ipCall('PC2', '10.7.0.2'));
    const a = pending(res, out);
    const rejected = await call(c, 'decide_approval', { approval_id: a.approval_id, decision: 'reject', comment: 'use 10.7.9.0/24 instead' });
    assert.equal(rejected.out.success, false);
    assert.match(JSON.stringify(rejected.out), /use 10\.7\.9\.0\/24 instead/);
    assert.doesNotMatch(await showIP('PC2'), /10\.7\.0\.2/);
  });

  test("another user's approval id is not found", async () => {
    const alice = await connect(TOKEN);
    const { res, out } = await call(alice, 'execute_vpcs_commands', ipCall('PC3', '10.7.0.3'));
    const a = pending(res, out);
    const bob = await connect(BOB);
    const foreign = await call(bob, 'decide_approval', { approval_id: a.approval_id, decision: 'approve' });
    assert.equal(foreign.out.success, false);
    assert.match(foreign.out.error, /not found/);
    assert.doesNotMatch(await showIP('PC3'), /10\.7\.0\.3/);
    const own = await call(alice, 'decide_approval', { approval_id: a.approval_id, decision: 'reject', comment: 'test over' });
    assert.match(JSON.stringify(own.out), /test over/);
  });

  test('approve_all: later calls of the session are applied without asking', async () => {
    const c = await connect(TOKEN);
    const first = await call(c, 'execute_vpcs_commands', ipCall('PC1', '10.7.1.1'));
    const a = pending(first.res, first.out);
    const all = await call(c, 'decide_approval', { approval_id: a.approval_id, decision: 'approve_all' });
    assert.equal(all.out.success, true, JSON.stringify(all.out));
    const later = await call(c, 'execute_vpcs_commands', ipCall('PC2', '10.7.1.2'));
    assert.equal(later.out.success, true, JSON.stringify(later.out));
    assert.notEqual(later.res._meta?.status, 'waiting_approval');
    assert.match(await showIP('PC2'), /10\.7\.1\.2\/24/);
  });

  test('with elicitation: an answer decides; no answer in time falls back to the two phases', async () => {
    const asked = [];
    const answering = await connect(TOKEN, {
      elicit: async (req) => {
        asked.push(req.params.message);
        return { action: 'accept', content: { decision: 'approve' } };
      },
    });
    const direct = await call(answering, 'execute_vpcs_commands', ipCall('PC3', '10.7.3.3'));
    assert.equal(direct.out.success, true, JSON.stringify(direct.out));
    assert.equal(asked.length, 1);
    assert.match(asked[0], /ip 10\.7\.3\.3\/24/);
    assert.match(await showIP('PC3'), /10\.7\.3\.3\/24/);

    const silent = await connect(TOKEN, {
      elicit: (_req, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ action: 'cancel' }))),
    });
    const began = Date.now();
    const { res, out } = await call(silent, 'execute_vpcs_commands', ipCall('PC3', '10.7.2.3'));
    const waited = Date.now() - began;
    assert.ok(waited >= 2000 && waited < 30000, `fell back after ${waited} ms (--mcp-elicit-timeout 2s)`);
    const a = pending(res, out);
    assert.doesNotMatch(await showIP('PC3'), /10\.7\.2\.3/);
    const decided = await call(silent, 'decide_approval', { approval_id: a.approval_id, decision: 'approve' });
    assert.equal(decided.out.success, true, JSON.stringify(decided.out));
    assert.match(await showIP('PC3'), /10\.7\.2\.3\/24/);
  });

  test('a template rendered for three devices; a missing var refused, nothing applied', async () => {
    const c = await connect(TOKEN);
    const devices = [1, 2, 3].map((i) => ({ device_name: `PC${i}`, vars: { ip: `10.8.0.${i}` } }));
    const { res, out } = await call(c, 'execute_vpcs_commands', { project_id: PROJECT, template: 'ip {{.ip}}/24', devices });
    const a = pending(res, out);
    assert.equal(out.data.length, 3);
    for (const i of [1, 2, 3]) {
      assert.match(a.question, new RegExp(`ip 10\\.8\\.0\\.${i}/24`), 'the approval shows the rendered lines');
      assert.match(out.data[i - 1].result, new RegExp(`ip 10\\.8\\.0\\.${i}/24`));
    }
    const done = await call(c, 'decide_approval', { approval_id: a.approval_id, decision: 'approve' });
    assert.equal(done.out.success, true, JSON.stringify(done.out));
    for (const i of [1, 2, 3]) assert.match(await showIP(`PC${i}`), new RegExp(`10\\.8\\.0\\.${i}/24`));

    const missing = await call(c, 'execute_vpcs_commands', {
      project_id: PROJECT,
      template: 'ip {{.ip}}/24 {{.gw}}',
      devices: [{ device_name: 'PC1', vars: { ip: '10.9.0.1', gw: '10.9.0.254' } }, { device_name: 'PC2', vars: { ip: '10.9.0.2' } }],
    });
    assert.equal(missing.out.success, false);
    assert.match(missing.out.error, /device PC2: the template uses \{\{\.gw\}\}, which its vars do not set; nothing was applied/);
    assert.notEqual(missing.res._meta?.status, 'waiting_approval');
    assert.doesNotMatch(await showIP('PC1'), /10\.9\.0\.1/);
  });

  test('Origin: a foreign page is refused, the copilot\'s own origin and no Origin pass', async () => {
    const init = (origin) =>
      fetch(new URL('/mcp', URL_), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(origin ? { Origin: origin } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0', id: 1, method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'origin-check', version: '1' } },
        }),
      });
    const refused = await init('http://evil.example');
    assert.equal(refused.status, 403);
    assert.match((await refused.json()).message, /Origin http:\/\/evil\.example may not use the copilot's MCP endpoint/);
    assert.equal((await init(new URL(URL_).origin)).status, 200);
    assert.equal((await init('')).status, 200);
    await assert.rejects(connect(TOKEN, { headers: { Origin: 'http://evil.example' } }), /403|Origin/);
  });

  test('a GNS3 API key is accepted, then refused once revoked', async () => {
    const c = await connect(KEY);
    const topo = await call(c, 'get_gns3_topology', { project_id: PROJECT });
    assert.equal(topo.out.success, true);
    assert.ok(topo.out.data.some((d) => d.name === 'PC1'));
    const r = await fetch(`${CONTROL}/revoke`, { method: 'POST' });
    assert.equal(r.status, 204);
    const revoked = Date.now();
    for (;;) {
      try {
        await connect(KEY);
      } catch (err) {
        assert.match(String(err), /token is invalid|401|Unauthorized/i);
        break;
      }
      assert.ok(Date.now() - revoked < 10000, 'the revoked key still works after 10 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const took = Date.now() - revoked;
    console.log(`a revoked API key was refused ${took} ms after its revocation (token cache 2 s)`);
    assert.ok(took <= 3500, `refused ${took} ms after the revocation`);
  });

  test('close the sessions', async () => {
    for (const c of opened) await c.close();
  });
});
