/**
 * The header: conversation picker with New / Rename / Delete / Export, the model picker (chat
 * models grouped by provider, with protocol badges), the protocol override and the web-search
 * switch. Native <select>s and checkboxes, so the keyboard and screen readers work as usual; every
 * change is posted as an intent and the host answers with a new snapshot.
 */
import * as l10n from '@vscode/l10n';
import type { ChatModelView, Snapshot, WireProtocol } from '../../shared/protocol';
import { button, h, setHidden } from '../shared/dom';
import { PROTOCOL_LABELS } from '../../shared/protocol';
import { formatNumber } from '../../shared/format';
import { PROTOCOL_SHORT } from './labels';
import type { ChatChannel } from './chatChannel';
import { ThinkingControl } from './thinkingControl';

let nextId = 0;

function labelled<T extends HTMLElement>(text: string, control: T, className = 'sr-only'): [HTMLLabelElement, T] {
  control.id ||= `ctl-${++nextId}`;
  return [h('label', { className, text, attrs: { for: control.id } }), control];
}

function activeProtocol(model: ChatModelView, override: WireProtocol | undefined): WireProtocol | undefined {
  return override && model.protocols.includes(override) ? override : model.protocols[0];
}

export class Header {
  readonly el: HTMLElement;
  private readonly conversation = h('select', { className: 'select conversation-select' });
  private readonly renameButton = button(l10n.t('Rename'), { className: 'btn-small', ariaLabel: l10n.t('Rename this conversation') });
  private readonly deleteButton = button(l10n.t('Delete'), { className: 'btn-small', ariaLabel: l10n.t('Delete this conversation') });
  private readonly exportButton = button(l10n.t('Export'), { className: 'btn-small', ariaLabel: l10n.t('Export this conversation as Markdown') });
  private readonly model = h('select', { className: 'select model-select' });
  private readonly badges = h('span', { className: 'badges', attrs: { 'aria-label': l10n.t('Protocols this model speaks') } });
  private readonly protocol = h('select', { className: 'select protocol-select' });
  private readonly search = h('input', { attrs: { type: 'checkbox' } });
  private readonly searchLabel: HTMLElement;
  private readonly thinking: ThinkingControl;
  private conversationsKey = '';
  private modelsKey = '';
  private protocolKey = '';
  private snapshot: Snapshot | undefined;

  constructor(private readonly channel: ChatChannel) {
    const newButton = button(l10n.t('New'), { className: 'btn-small', ariaLabel: l10n.t('Start a new conversation') });
    this.thinking = new ThinkingControl(channel);
    this.searchLabel = h('label', { className: 'search-toggle', attrs: { title: l10n.t('Let the model search the web') } }, this.search, ' ', l10n.t('Web search'));
    this.el = h(
      'header',
      { className: 'chat-header' },
      h('div', { className: 'row' }, ...labelled(l10n.t('Conversation'), this.conversation), newButton, this.renameButton, this.deleteButton, this.exportButton),
      h('div', { className: 'row' }, ...labelled(l10n.t('Model'), this.model), this.badges, ...labelled(l10n.t('Protocol'), this.protocol), this.thinking.el, this.searchLabel),
    );

    const current = (): string | undefined => this.snapshot?.conversationId;
    newButton.addEventListener('click', () => channel.post({ type: 'newConversation' }));
    this.renameButton.addEventListener('click', () => {
      const id = current();
      if (id) channel.post({ type: 'renameConversation', id });
    });
    this.deleteButton.addEventListener('click', () => {
      const id = current();
      if (id) channel.post({ type: 'deleteConversation', id });
    });
    this.exportButton.addEventListener('click', () => {
      const id = current();
      if (id) channel.post({ type: 'exportConversation', id });
    });
    this.conversation.addEventListener('change', () => {
      const id = this.conversation.value;
      if (id && id !== current()) channel.post({ type: 'switchConversation', id });
    });
    this.model.addEventListener('change', () => {
      if (this.model.value) channel.post({ type: 'selectModel', model: this.model.value });
    });
    this.protocol.addEventListener('change', () => {
      const value = this.protocol.value;
      const chosen = this.selectedModel()?.protocols.find((p) => p === value);
      channel.post(chosen ? { type: 'setProtocol', protocol: chosen } : { type: 'setProtocol' });
    });
    this.search.addEventListener('change', () => channel.post({ type: 'setSearch', enabled: this.search.checked }));
  }

  /** Focus the model picker (the "Pick another model" error action does this too, host-side). */
  focusModel(): void {
    this.model.focus();
  }

  update(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    this.updateConversations(snapshot);
    this.updateModels(snapshot);
    const model = this.selectedModel();
    this.updateProtocols(model, snapshot.protocolOverride);
    // Shown only where the model can search over the protocol in use; each protocol has its own form.
    setHidden(this.searchLabel, !model?.searchable);
    const active = model ? activeProtocol(model, snapshot.protocolOverride) : undefined;
    this.searchLabel.title =
      active === 'responses'
        ? l10n.t('Let the model search the web (the Responses web_search tool); its sources are listed under the answer')
        : l10n.t('Let the model search the web (enable_search, for third-provider models)');
    this.search.checked = snapshot.enableSearch;
    this.thinking.update(model, snapshot.thinking);
  }

  private selectedModel(): ChatModelView | undefined {
    const snapshot = this.snapshot;
    return snapshot?.models.find((m) => m.id === snapshot.model);
  }

  private updateConversations(snapshot: Snapshot): void {
    const key = JSON.stringify([snapshot.conversationId, snapshot.conversations.map((c) => [c.id, c.title, c.messageCount])]);
    if (key === this.conversationsKey) return;
    this.conversationsKey = key;
    const options = snapshot.conversations.map((c) => h('option', { text: c.title || l10n.t('Untitled'), attrs: { value: c.id, title: l10n.t('{0} ({1} messages)', c.title || l10n.t('Untitled'), formatNumber(c.messageCount)) } }));
    if (!snapshot.conversationId || !snapshot.conversations.some((c) => c.id === snapshot.conversationId)) {
      options.unshift(h('option', { text: l10n.t('New conversation'), attrs: { value: '' } }));
    }
    this.conversation.replaceChildren(...options);
    this.conversation.value = snapshot.conversationId ?? '';
    this.conversation.disabled = options.length <= 1 && !snapshot.conversationId;
    const none = !snapshot.conversationId;
    this.renameButton.disabled = none;
    this.deleteButton.disabled = none;
    this.exportButton.disabled = none;
  }

  private updateModels(snapshot: Snapshot): void {
    const key = JSON.stringify([snapshot.model, snapshot.models]);
    if (key === this.modelsKey) return;
    this.modelsKey = key;
    const groups = new Map<string, ChatModelView[]>();
    for (const model of snapshot.models) {
      const list = groups.get(model.provider) ?? [];
      list.push(model);
      groups.set(model.provider, list);
    }
    const children: HTMLElement[] = [];
    if (!snapshot.model || !snapshot.models.some((m) => m.id === snapshot.model)) {
      const text = snapshot.model ? l10n.t('{0} (not available)', snapshot.model) : snapshot.models.length ? l10n.t('Choose a model') : l10n.t('No chat models');
      children.push(h('option', { text, attrs: { value: snapshot.model ?? '', disabled: '' } }));
    }
    for (const [provider, models] of groups) {
      children.push(
        h(
          'optgroup',
          { attrs: { label: provider || l10n.t('Other') } },
          ...models.map((m) =>
            h('option', {
              text: [`${m.id}  [${m.protocols.map((p) => PROTOCOL_SHORT[p]).join(' · ')}]`, m.imageInput ? l10n.t('images') : '', m.searchable ? l10n.t('web search') : ''].filter(Boolean).join(' · '),
              attrs: { value: m.id, title: `${m.id}: ${m.protocols.map((p) => PROTOCOL_LABELS[p]).join(', ')}` },
            }),
          ),
        ),
      );
    }
    this.model.replaceChildren(...children);
    this.model.value = snapshot.model ?? '';
    this.model.disabled = snapshot.models.length === 0;
  }

  private updateProtocols(model: ChatModelView | undefined, override: WireProtocol | undefined): void {
    const protocols = model?.protocols ?? [];
    const active = model ? activeProtocol(model, override) : undefined;
    this.badges.replaceChildren(
      ...protocols.map((p) => h('span', { className: p === active ? 'badge badge-active' : 'badge', text: PROTOCOL_LABELS[p], attrs: { title: p === active ? l10n.t('Used for this conversation') : l10n.t('Also available') } })),
    );
    const key = JSON.stringify([protocols, override]);
    if (key !== this.protocolKey) {
      this.protocolKey = key;
      const first = protocols[0];
      this.protocol.replaceChildren(
        h('option', { text: first ? l10n.t('auto ({0})', PROTOCOL_LABELS[first]) : l10n.t('auto'), attrs: { value: '' } }),
        ...protocols.map((p) => h('option', { text: PROTOCOL_LABELS[p], attrs: { value: p } })),
      );
      this.protocol.value = override && protocols.includes(override) ? override : '';
    }
    this.protocol.disabled = protocols.length <= 1;
    setHidden(this.protocol, !model);
  }
}
