/**
 * The thinking control in the composer's bar: a light bulb and a compact native <select> with the
 * choices the model honours over the protocol in use (the host works them out,
 * core/chat/thinking.ts), hidden for a model without one, and a plain note for a model that always
 * thinks. A <select> rather than a toggle because a model may take a depth, not only on/off. Each
 * change is posted as an intent; the host stores it with the conversation and answers with a new
 * snapshot.
 */
import * as l10n from '@vscode/l10n';
import type { ChatModelView, ThinkingChoiceView } from '../../shared/protocol';
import { h, setHidden, setText } from '../shared/dom';
import type { ChatChannel } from './chatChannel';
import { icon } from './icons';

function choiceLabel(choice: ThinkingChoiceView): string {
  switch (choice) {
    // Short words: the bar is narrow, and the light bulb and the tooltip say what they are about.
    case 'auto':
      return l10n.t('Default');
    case 'off':
      return l10n.t('Off');
    case 'on':
      return l10n.t('On');
    case 'low':
      return l10n.t('Low');
    case 'medium':
      return l10n.t('Medium');
    case 'high':
      return l10n.t('High');
  }
}

export class ThinkingControl {
  readonly el: HTMLElement;
  private readonly select = h('select', { className: 'select thinking-select' });
  private readonly always = h('span', { className: 'thinking-always' });
  private key = '';

  constructor(channel: ChatChannel) {
    this.select.setAttribute('aria-label', l10n.t('Thinking'));
    this.select.title = l10n.t('Whether the model thinks before it answers, and how hard; kept with this conversation');
    this.el = h(
      'span',
      { className: 'thinking-control', attrs: { title: this.select.title } },
      icon('lightbulb'),
      this.select,
      this.always,
    );
    this.select.addEventListener('change', () => {
      const choice = (this.select.value || undefined) as ThinkingChoiceView | undefined;
      if (choice) channel.intent({ type: 'setThinking', choice });
    });
    this.update(undefined, undefined);
  }

  /**
   * Shows the control for `model`. A choice the model cannot honour (e.g. "off" for a model whose
   * thinking cannot be turned off) is shown as it is stored, marked as not applying, so switching
   * back to a model that takes it keeps the conversation's choice.
   */
  update(model: ChatModelView | undefined, choice: ThinkingChoiceView | undefined): void {
    const control = model?.thinking;
    setHidden(this.el, !control);
    const always = control?.always === true;
    setHidden(this.always, !always);
    setHidden(this.select, !control || always);
    if (always) {
      setText(this.always, l10n.t('Always thinks'));
      this.always.title = l10n.t('{0} always thinks before it answers; it has no switch.', model?.id ?? '');
    }
    this.el.title = always ? this.always.title : this.select.title;
    const choices = control && !always ? control.choices : [];
    // A depth on a model with only a switch is sent as "on", so it shows as on.
    const stored = choice ?? 'auto';
    const current =
      !choices.includes(stored) && stored !== 'off' && stored !== 'auto' && choices.includes('on') ? 'on' : stored;
    const key = JSON.stringify([choices, current]);
    if (key === this.key) return;
    this.key = key;
    const options = choices.map((c) => h('option', { text: choiceLabel(c), attrs: { value: c } }));
    if (choices.length && !choices.includes(current)) {
      options.unshift(
        h('option', {
          text: l10n.t('{0} (not for this model)', choiceLabel(current)),
          attrs: {
            value: current,
            disabled: '',
            title: l10n.t('This model cannot take that choice: its default applies'),
          },
        }),
      );
    }
    this.select.replaceChildren(...options);
    this.select.value = current;
  }
}
