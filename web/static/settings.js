// The user's own LLM model configurations: list, add, edit (with optimistic locking), make
// default, delete. Provider presets fill the base URL; an API key is only ever sent, never shown.

import { api } from './api.js';
import { clear, h } from './dom.js';

// Used when the server offers no presets; the server's list wins when it has one.
const FALLBACK_PRESETS = [
  { id: 'openai', label: 'OpenAI', base_url: 'https://api.openai.com/v1', models: ['gpt-4o-mini', 'gpt-4o'] },
  { id: 'deepseek', label: 'DeepSeek', base_url: 'https://api.deepseek.com/v1', models: ['deepseek-chat'] },
  { id: 'openrouter', label: 'OpenRouter', base_url: 'https://openrouter.ai/api/v1', models: [] },
  { id: 'ollama', label: 'Ollama', base_url: 'http://localhost:11434/v1', models: [] },
  { id: 'lmstudio', label: 'LM Studio', base_url: 'http://localhost:1234/v1', models: [] },
  { id: 'vllm', label: 'vLLM', base_url: 'http://localhost:8000/v1', models: [] },
  { id: 'litellm', label: 'LiteLLM proxy', base_url: 'http://localhost:4000/v1', models: [] },
  { id: 'custom', label: 'Other OpenAI-compatible endpoint', base_url: '', models: [] },
];

const $ = (id) => document.getElementById(id);
let ctx = null;
let presets = [];
let editing = null; // the config being edited, or null when adding
let wired = false;

/** initSettings connects the form once; user() returns the signed-in user. */
export function initSettings(c) {
  ctx = c;
  if (wired) return;
  wired = true;
  $('llm-provider').addEventListener('change', () => applyPreset(true));
  $('llm-form').addEventListener('submit', (e) => {
    e.preventDefault();
    save();
  });
  $('llm-cancel').addEventListener('click', () => resetForm());
}

function message(kind, text) {
  const err = $('settings-error');
  const info = $('settings-info');
  err.hidden = kind !== 'error' || !text;
  info.hidden = kind !== 'info' || !text;
  (kind === 'error' ? err : info).textContent = text || '';
  if (kind === 'error') info.hidden = true;
  if (text) (kind === 'error' ? err : info).scrollIntoView({ block: 'nearest' });
}

function normalizePresets(res) {
  const list = Array.isArray(res) ? res : (res && (res.providers || res.items || res.presets)) || [];
  return list
    .map((p) => {
      if (typeof p === 'string') return { id: p, label: p, base_url: '', models: [] };
      const id = String(p.id ?? p.provider ?? p.name ?? '');
      const models = (p.example_models || p.models || p.suggested_models || []).map((m) => (typeof m === 'string' ? m : m.id || m.name || '')).filter(Boolean);
      return {
        id,
        label: String(p.label ?? p.display_name ?? p.name ?? id),
        base_url: String(p.base_url ?? ''),
        example: String(p.base_url_example ?? ''),
        keyRequired: p.api_key_required !== false,
        notes: String(p.notes ?? ''),
        models,
      };
    })
    .filter((p) => p.id);
}

/** showSettings loads presets and configurations into the view. */
export async function showSettings() {
  message('info', '');
  if (!presets.length) {
    try {
      presets = normalizePresets(await api.providers());
    } catch {
      presets = [];
    }
    if (!presets.length) presets = FALLBACK_PRESETS;
    if (!presets.some((p) => p.id === 'custom')) presets = [...presets, { id: 'custom', label: 'Other OpenAI-compatible endpoint', base_url: '', models: [] }];
    const sel = $('llm-provider');
    clear(sel);
    for (const p of presets) sel.append(h('option', { value: p.id, text: p.label }));
    if (!editing) applyPreset(true);
  }
  await loadConfigs();
}

function flat(cfg) {
  return { ...cfg, ...(cfg.config && typeof cfg.config === 'object' ? cfg.config : {}) };
}

/** maskedKey says which key is stored without showing it: the server's hint ("sk-…abcd") or dots. */
function maskedKey(c) {
  if (typeof c.api_key_hint === 'string' && c.api_key_hint) return c.api_key_hint;
  if (c.api_key_set === false) return 'not set';
  return '••••••••';
}

async function loadConfigs() {
  const user = ctx.user();
  if (!user) return;
  let own = [];
  let inherited = [];
  try {
    const all = await api.llmConfigs(user.user_id);
    const list = Array.isArray(all) ? all : (all && all.configs) || [];
    own = list.filter((c) => !c.source || c.source === 'user');
    inherited = list.filter((c) => c.source && c.source !== 'user');
  } catch (err) {
    if (err.kind === 'expired') return;
    try {
      own = (await api.ownLLMConfigs(user.user_id)) || [];
    } catch (err2) {
      if (err2.kind === 'expired') return;
      message('error', err2.status === 404 ? 'This copilot server does not offer per-user LLM settings yet; the operator’s default model is used.' : 'Loading your configurations failed: ' + err2.message);
      own = [];
    }
  }
  renderConfigs(own, inherited);
}

function renderConfigs(own, inherited) {
  const rows = $('llm-rows');
  clear(rows);
  $('llm-empty').hidden = own.length > 0;
  $('llm-table').hidden = own.length === 0;
  for (const raw of own) {
    const c = flat(raw);
    rows.append(
      h(
        'tr',
        { dataset: { configId: c.config_id } },
        h('td', { text: c.name || '' }),
        h('td', { text: c.provider || '' }),
        h('td', {}, h('code', { text: c.model || '' })),
        h('td', {}, h('code', { class: 'masked-key', text: maskedKey(c) })),
        h('td', {}, c.is_default ? h('span', { class: 'badge badge-ok', text: 'default' }) : h('button', { type: 'button', class: 'link-button', text: 'Make default', 'aria-label': 'Make ' + (c.name || '') + ' the default', onclick: () => makeDefault(c) })),
        h(
          'td',
          {},
          h(
            'div',
            { class: 'row-actions' },
            h('button', { type: 'button', text: 'Edit', 'aria-label': 'Edit ' + (c.name || ''), onclick: () => edit(c) }),
            h('button', { type: 'button', class: 'danger-outline', text: 'Delete', 'aria-label': 'Delete ' + (c.name || ''), onclick: () => remove(c) }),
          ),
        ),
      ),
    );
  }
  const box = $('llm-inherited');
  const list = $('llm-inherited-list');
  clear(list);
  box.hidden = inherited.length === 0;
  for (const raw of inherited) {
    const c = flat(raw);
    list.append(h('li', {}, h('strong', { text: c.name || '' }), ` — ${c.provider || ''} `, h('code', { text: c.model || '' }), c.group_name ? ` (group ${c.group_name})` : '', c.is_default ? ' · default' : ''));
  }
}

function preset(id) {
  return presets.find((p) => p.id === id) || null;
}

function applyPreset(fillURL) {
  const p = preset($('llm-provider').value);
  const dl = $('llm-model-list');
  clear(dl);
  if (!p) return;
  for (const m of p.models) dl.append(h('option', { value: m }));
  $('llm-base-url').placeholder = p.base_url || p.example || 'https://…/v1';
  $('llm-model').placeholder = p.models[0] || 'model name';
  const notes = $('llm-provider-notes');
  notes.textContent = p.notes || '';
  notes.hidden = !p.notes;
  if (fillURL) $('llm-base-url').value = p.base_url || '';
}

function resetForm() {
  editing = null;
  $('llm-form').reset();
  $('llm-form-title').textContent = 'Add a configuration';
  $('llm-cancel').hidden = true;
  $('llm-api-key').placeholder = '';
  $('llm-api-key-hint').textContent = 'Stored encrypted; never shown again.';
  applyPreset(true);
}

function edit(c) {
  editing = c;
  $('llm-form-title').textContent = 'Edit “' + (c.name || '') + '”';
  $('llm-cancel').hidden = false;
  $('llm-name').value = c.name || '';
  const sel = $('llm-provider');
  if (![...sel.options].some((o) => o.value === c.provider)) sel.append(h('option', { value: c.provider || 'custom', text: c.provider || 'custom' }));
  sel.value = c.provider || 'custom';
  applyPreset(false);
  $('llm-base-url').value = c.base_url || '';
  $('llm-model').value = c.model || '';
  $('llm-api-key').value = '';
  $('llm-api-key').placeholder = 'unchanged (' + maskedKey(c) + ')';
  $('llm-api-key-hint').textContent = 'Leave empty to keep the stored key.';
  $('llm-temperature').value = c.temperature ?? 0.7;
  $('llm-max-tokens').value = c.max_tokens ?? '';
  $('llm-context-limit').value = c.context_limit ?? 128;
  $('llm-context-strategy').value = c.context_strategy || 'balanced';
  $('llm-mode').value = c.copilot_mode || 'teaching_assistant';
  $('llm-effort').value = c.reasoning_effort || 'default';
  $('llm-default').checked = !!c.is_default;
  $('llm-name').focus();
}

function formBody() {
  const num = (id) => {
    const v = $(id).value.trim();
    return v === '' ? null : Number(v);
  };
  const body = {
    name: $('llm-name').value.trim(),
    model_type: 'text',
    provider: $('llm-provider').value,
    base_url: $('llm-base-url').value.trim(),
    model: $('llm-model').value.trim(),
    temperature: num('llm-temperature'),
    context_limit: num('llm-context-limit'),
    context_strategy: $('llm-context-strategy').value,
    copilot_mode: $('llm-mode').value,
    // Said to each provider in its own words by the copilot; a value the model cannot take is
    // refused with the ones it can.
    reasoning_effort: $('llm-effort').value,
    is_default: $('llm-default').checked,
  };
  const maxTokens = num('llm-max-tokens');
  if (maxTokens !== null) body.max_tokens = maxTokens;
  const key = $('llm-api-key').value;
  if (key) body.api_key = key;
  return body;
}

function validate(b) {
  if (!b.name || b.name.length > 100) return 'Give the configuration a name of 1 to 100 characters.';
  if (!b.model) return 'Enter the model name, for example gpt-4o-mini.';
  if (b.temperature === null || !(b.temperature >= 0 && b.temperature <= 2)) return 'Temperature must be between 0 and 2.';
  if (b.context_limit === null || !(b.context_limit >= 1) || !Number.isInteger(b.context_limit)) return 'The context window must be a whole number of thousands of tokens (for example 128).';
  if (b.max_tokens !== undefined && !(Number.isInteger(b.max_tokens) && b.max_tokens > 0)) return 'Max output tokens must be a positive whole number, or empty.';
  if (b.base_url && !/^https?:\/\/\S+$/i.test(b.base_url)) return 'The base URL must start with http:// or https://.';
  return '';
}

async function save() {
  const user = ctx.user();
  const body = formBody();
  const problem = validate(body);
  if (problem) {
    message('error', problem);
    return;
  }
  const btn = $('llm-save');
  btn.disabled = true;
  try {
    if (editing) {
      body.expected_version = editing.version;
      await api.updateLLMConfig(user.user_id, editing.config_id, body);
      message('info', 'Saved “' + body.name + '”.');
    } else {
      await api.createLLMConfig(user.user_id, body);
      message('info', 'Added “' + body.name + '”.');
    }
    resetForm();
    await loadConfigs();
    ctx.onChanged();
  } catch (err) {
    if (err.kind === 'expired') return;
    if (err.status === 409) {
      message('error', 'This configuration was changed somewhere else meanwhile. The list now shows the latest version; edit it again.');
      resetForm();
      await loadConfigs();
    } else {
      message('error', 'Saving failed: ' + err.message);
    }
  } finally {
    btn.disabled = false;
  }
}

async function makeDefault(c) {
  try {
    await api.setDefaultLLMConfig(ctx.user().user_id, c.config_id);
    message('info', '“' + c.name + '” is now your default.');
  } catch (err) {
    if (err.kind !== 'expired') message('error', 'Setting the default failed: ' + err.message);
  }
  await loadConfigs();
}

async function remove(c) {
  const dialog = $('confirm-dialog');
  $('confirm-title').textContent = 'Delete configuration?';
  $('confirm-text').textContent = `“${c.name}” (${c.provider} ${c.model}) will be deleted, with its stored API key.`;
  dialog.returnValue = '';
  dialog.onclose = async () => {
    dialog.onclose = null;
    $('confirm-title').textContent = 'Delete conversation?';
    if (dialog.returnValue !== 'ok') return;
    try {
      await api.deleteLLMConfig(ctx.user().user_id, c.config_id);
      message('info', 'Deleted “' + c.name + '”.');
      if (editing && editing.config_id === c.config_id) resetForm();
    } catch (err) {
      if (err.kind !== 'expired') message('error', 'Deleting failed: ' + err.message);
    }
    await loadConfigs();
  };
  dialog.showModal();
}
