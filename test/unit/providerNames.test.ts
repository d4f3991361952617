import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { providerName } from '../../src/core/models/providerNames';

describe('provider names in the Models view', () => {
  it('names the channel ids people do not know by what they know', () => {
    assert.equal(providerName('zhipu_4v'), 'Zhipu GLM');
    assert.equal(providerName('ali'), 'Alibaba Bailian');
    assert.equal(providerName('moonshot'), 'Moonshot Kimi');
    assert.equal(providerName('custom'), 'Custom channel');
    assert.equal(providerName('openai'), 'OpenAI');
    assert.equal(providerName('OpenAI'), 'OpenAI', 'case does not matter');
  });

  it('shows an unknown id as it came rather than guessing', () => {
    assert.equal(providerName('acme_new_channel'), 'acme_new_channel');
    assert.equal(providerName('Acme AI'), 'Acme AI');
  });

  it('gives "Chat with This Model" an icon of its own, not the chat rows\' icon', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      contributes: { commands: { command: string; icon?: string }[] };
    };
    const icon = manifest.contributes.commands.find((c) => c.command === 'modelGateway.chatWithModel')?.icon;
    const modelsView = readFileSync('src/host/views/modelsView.ts', 'utf8');
    const rowIcon = /chat: '([a-z-]+)'/.exec(modelsView)?.[1];
    assert.ok(icon && rowIcon);
    assert.notEqual(icon, `$(${rowIcon})`);
  });
});
