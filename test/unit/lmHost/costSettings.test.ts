/**
 * The settings that raise what a request costs: bounded in package.json, restricted in untrusted
 * workspaces, and clamped when read with one warning per value and session.
 */
// First: answers `vscode` for every host module imported after it.
import { ui } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { boundedCost, COST_CHOICES, COST_LIMITS, type CostKey } from '../../../src/core/settings';
import { chatSettings } from '../../../src/host/chat/chatSettings';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
  contributes: {
    configuration:
      | { properties: Record<string, { maximum?: number; minimum?: number }> }
      | Array<{ properties: Record<string, { maximum?: number; minimum?: number }> }>;
  };
};
const properties = Object.assign({}, ...[manifest.contributes.configuration].flat().map((c) => c.properties)) as Record<
  string,
  { maximum?: number; minimum?: number }
>;

describe('cost settings: bounded and restricted', () => {
  beforeEach(() => {
    ui.settings = {};
    ui.shown = [];
  });

  it('declares each bound in package.json and restricts every cost setting and the system prompt in untrusted workspaces', () => {
    for (const [key, { min, max }] of Object.entries(COST_LIMITS)) {
      assert.equal(properties[`modelGateway.${key}`]?.maximum, max, `${key} maximum`);
      assert.equal(properties[`modelGateway.${key}`]?.minimum, min, `${key} minimum`);
    }
    const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
    for (const key of [...Object.keys(COST_LIMITS), ...COST_CHOICES, 'chat.systemPrompt']) {
      assert.ok(properties[`modelGateway.${key}`], `${key} is a declared setting`);
      assert.ok(restricted.includes(`modelGateway.${key}`), `${key} is restricted in untrusted workspaces`);
    }
  });

  it('clamps a value over the bound, keeps one within it, and treats nonsense as the default', () => {
    const key: CostKey = 'chat.historyMessages';
    assert.deepEqual(boundedCost(key, 12.7, 40), { value: 12 });
    assert.deepEqual(boundedCost(key, 0, 40), { value: 40 });
    assert.deepEqual(boundedCost(key, 'lots', 40), { value: 40 });
    const over = boundedCost(key, 1e9, 40);
    assert.equal(over.value, COST_LIMITS[key].max);
    assert.match(
      over.clamped ?? '',
      /"modelGateway\.chat\.historyMessages" is 1000000000, above its limit of 500; 500 is used/,
    );
  });

  it('reads the chat settings within their bounds and warns once per value and session', () => {
    ui.settings = {
      'modelGateway.chat.maxTokens': 10_000_000,
      'modelGateway.chat.historyMessages': 100_000,
      'modelGateway.chat.contextMaxChars': 5e9,
      'modelGateway.chat.imageMaxBytes': 1e12,
    };
    const first = chatSettings();
    assert.deepEqual(
      {
        maxTokens: first.maxTokens,
        historyMessages: first.historyMessages,
        contextMaxChars: first.contextMaxChars,
        imageMaxBytes: first.imageMaxBytes,
      },
      { maxTokens: 128_000, historyMessages: 500, contextMaxChars: 1_000_000, imageMaxBytes: 20 * 1024 * 1024 },
    );
    assert.equal(ui.shown.filter((s) => s.level === 'warning').length, 4, ui.shown.map((s) => s.message).join('\n'));
    chatSettings();
    assert.equal(ui.shown.length, 4, 'the same values are not announced again');
    ui.settings['modelGateway.chat.maxTokens'] = 20_000_000;
    chatSettings();
    assert.equal(ui.shown.length, 5, 'a new value over the bound is');
  });
});
