/**
 * The input area: a textarea (Enter sends, Shift+Enter adds a line), Send / Stop, the attach buttons
 * and the chips of the attachments waiting to go with the next message. The draft survives a
 * reload through the webview's UI state.
 */
import type { Snapshot } from '../../shared/protocol';
import { button, h, setHidden } from './dom';
import { formatChars } from './labels';
import type { HostChannel } from './vscodeApi';

export class Composer {
  readonly el: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly chips: HTMLElement;
  private busy = false;
  private attachmentsKey = '';

  constructor(private readonly channel: HostChannel) {
    this.input = h('textarea', {
      className: 'input composer-input',
      attrs: { rows: '2', 'aria-label': 'Message', placeholder: 'Ask anything (Enter to send, Shift+Enter for a new line)' },
    });
    this.input.value = channel.ui.draft;
    this.sendButton = button('Send', { className: 'btn', ariaLabel: 'Send the message (Enter)' });
    this.stopButton = button('Stop', { className: 'btn btn-stop', ariaLabel: 'Stop the answer (Escape)' });
    const attachFile = button('Current file', { className: 'btn-small', ariaLabel: 'Attach the current file' });
    const attachSelection = button('Selection', { className: 'btn-small', ariaLabel: 'Attach the current selection' });
    this.chips = h('div', { className: 'chips', attrs: { 'aria-label': 'Attachments for the next message' } });
    this.el = h(
      'footer',
      { className: 'composer' },
      this.chips,
      this.input,
      h('div', { className: 'row' }, h('span', { className: 'attach-label', text: 'Attach:' }), attachFile, attachSelection, h('span', { className: 'spacer' }), this.stopButton, this.sendButton),
    );

    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      }
    });
    this.input.addEventListener('input', () => {
      channel.ui.draft = this.input.value;
      channel.saveUi();
      this.updateButtons();
    });
    this.sendButton.addEventListener('click', () => this.send());
    this.stopButton.addEventListener('click', () => this.stop());
    attachFile.addEventListener('click', () => channel.post({ type: 'attach', what: 'file' }));
    attachSelection.addEventListener('click', () => channel.post({ type: 'attach', what: 'selection' }));
    this.chips.addEventListener('click', (event) => {
      const remove = (event.target as Element).closest<HTMLElement>('[data-attachment]');
      if (remove?.dataset.attachment) channel.post({ type: 'removeAttachment', id: remove.dataset.attachment });
    });
    this.updateButtons();
  }

  focus(): void {
    this.input.focus();
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.updateButtons();
  }

  /** Escape anywhere stops a running answer. */
  stop(): boolean {
    if (!this.busy) return false;
    this.channel.post({ type: 'stop' });
    return true;
  }

  updateAttachments(attachments: Snapshot['attachments']): void {
    const key = JSON.stringify(attachments);
    if (key === this.attachmentsKey) return;
    this.attachmentsKey = key;
    this.chips.replaceChildren(
      ...attachments.map((a) => {
        const remove = button('×', { className: 'chip-remove', ariaLabel: `Remove attachment ${a.label}` });
        remove.dataset.attachment = a.id;
        return h(
          'span',
          { className: 'chip', attrs: { title: `${a.chars} characters${a.truncated ? ', cut to fit' : ''}` } },
          a.label,
          h('span', { className: 'chip-detail', text: `${formatChars(a.chars)}${a.truncated ? ', cut' : ''}` }),
          remove,
        );
      }),
    );
    setHidden(this.chips, attachments.length === 0);
  }

  private send(): void {
    const text = this.input.value;
    if (this.busy || !text.trim()) return;
    this.channel.post({ type: 'send', text });
    this.input.value = '';
    this.channel.ui.draft = '';
    this.channel.saveUi();
    this.updateButtons();
  }

  private updateButtons(): void {
    this.sendButton.disabled = this.busy || !this.input.value.trim();
    setHidden(this.stopButton, !this.busy);
    setHidden(this.sendButton, this.busy);
  }
}
