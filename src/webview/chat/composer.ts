/**
 * The input area, one framed box as in VS Code's own chat: the message (Enter sends, Shift+Enter
 * adds a line) and, along its bottom edge, the model picker (modelPicker.ts), the attach buttons and
 * Send (Stop while an answer is written). Above the box, the chips of the attachments waiting to
 * go with the next message; below it, why something cannot be sent or attached. Images come in
 * three ways: the image button (the host's open dialog), pasting into the message box and dropping
 * files on the view. The draft survives a reload through the webview's UI state.
 */
import * as l10n from '@vscode/l10n';
import type { ChatModelView, Snapshot } from '../../shared/protocol';
import { button, h, setHidden, setText } from '../shared/dom';
import { formatBytes, formatNumber } from '../../shared/format';
import { imageChip, textChip } from './attachmentChip';
import type { ChatChannel } from './chatChannel';
import { iconButton } from './icons';
import { ModelPicker } from './modelPicker';

/** Types a browser gives image files; the host reads the real format from the bytes. */
const IMAGE_FILE = /^image\/|\.(png|jpe?g|gif|webp)$/i;

export class Composer {
  readonly el: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly imageButton: HTMLButtonElement;
  private readonly chips: HTMLElement;
  private readonly note: HTMLElement;
  private readonly picker: ModelPicker;
  private busy = false;
  private attachmentsKey = '';
  private model: ChatModelView | undefined;
  private maxBytes = 0;
  private pendingImages = 0;

  /** The note that explains a disabled Send, while it is shown. */
  private blockedNote = '';
  /** See setBlocked. */
  private blocked: string | undefined;
  private blockedShown = false;
  /** Where Up/Down in the input is among the earlier questions (-1: not recalling). */
  private recallIndex = -1;

  constructor(
    private readonly channel: ChatChannel,
    /** The questions of the shown conversation, oldest first (Up recalls them, newest first). */
    private readonly earlierQuestions: () => readonly string[],
    /** Why the chat cannot be used yet (no key…) with the action that fixes it: shown beside Send, which it disables. */
    setupNotice: HTMLElement = h('div'),
  ) {
    this.input = h('textarea', {
      className: 'input composer-input',
      attrs: {
        rows: '2',
        'aria-label': l10n.t('Message'),
        placeholder: l10n.t('Ask anything'),
        title: l10n.t('Enter sends, Shift+Enter adds a line, Up recalls your last question'),
      },
    });
    this.input.value = channel.state.draft;
    this.sendButton = iconButton('send', { label: l10n.t('Send the message (Enter)'), className: 'send-btn' });
    this.stopButton = iconButton('stop', { label: l10n.t('Stop the answer (Escape)'), className: 'stop-btn' });
    const attachFile = iconButton('file', { label: l10n.t('Attach the current file') });
    const attachSelection = iconButton('selection', { label: l10n.t('Attach the current selection') });
    this.imageButton = iconButton('image', {
      label: l10n.t('Attach images (or paste or drop them here)'),
      className: 'attach-image',
    });
    this.picker = new ModelPicker(channel);
    this.chips = h('div', { className: 'chips', attrs: { 'aria-label': l10n.t('Attachments for the next message') } });
    // Why something was not attached or cannot be sent; polite, so it is read without stealing focus.
    this.note = h('div', { className: 'composer-note', attrs: { role: 'status', 'aria-live': 'polite' } });
    this.note.hidden = true;
    const bar = h(
      'div',
      { className: 'composer-bar' },
      ...this.picker.controls,
      h(
        'span',
        { className: 'composer-attach', attrs: { role: 'group', 'aria-label': l10n.t('Attach') } },
        attachFile,
        attachSelection,
        this.imageButton,
      ),
      h('span', { className: 'composer-send' }, this.stopButton, this.sendButton),
    );
    this.el = h(
      'footer',
      { className: 'composer' },
      this.chips,
      h('div', { className: 'composer-box' }, this.input, bar),
      setupNotice,
      this.note,
    );
    // A click on the box's empty parts puts the caret in the message, as in an editor.
    this.el.querySelector('.composer-box')?.addEventListener('mousedown', (event) => {
      if (event.target === event.currentTarget || event.target === bar) {
        event.preventDefault();
        this.input.focus();
      }
    });

    this.listenToInput();
    this.listenToButtons(attachFile, attachSelection);
    this.listenForDrops();
    this.updateButtons();
  }

  /** Enter sends, Up and Down recall earlier questions, typing keeps the draft, a pasted image is attached. */
  private listenToInput(): void {
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      } else if (
        (event.key === 'ArrowUp' || event.key === 'ArrowDown') &&
        !event.shiftKey &&
        !event.altKey &&
        !event.ctrlKey &&
        !event.metaKey &&
        !event.isComposing
      ) {
        if (this.recall(event.key === 'ArrowUp' ? 1 : -1)) event.preventDefault();
      }
    });
    this.input.addEventListener('input', () => {
      this.recallIndex = -1;
      this.channel.state.draft = this.input.value;
      this.channel.saveSoon();
      this.updateButtons();
    });
    this.input.addEventListener('paste', (event) => {
      const files = Array.from(event.clipboardData?.files ?? []).filter(
        (f) => IMAGE_FILE.test(f.type) || IMAGE_FILE.test(f.name),
      );
      if (!files.length) return;
      // Text pastes go on as usual; only pasted images are taken over.
      event.preventDefault();
      this.attachFiles(files);
    });
  }

  /** Send, Stop, the attach buttons and each chip's remove button. */
  private listenToButtons(attachFile: HTMLButtonElement, attachSelection: HTMLButtonElement): void {
    this.sendButton.addEventListener('click', () => this.send());
    this.stopButton.addEventListener('click', () => this.stop());
    attachFile.addEventListener('click', () => this.channel.intent({ type: 'attach', what: 'file' }));
    attachSelection.addEventListener('click', () => this.channel.intent({ type: 'attach', what: 'selection' }));
    this.imageButton.addEventListener('click', () => {
      if (this.imagesRefused()) return;
      this.channel.intent({ type: 'attach', what: 'image' });
    });
    this.chips.addEventListener('click', (event) => {
      const remove = (event.target as Element).closest<HTMLElement>('[data-attachment]');
      if (remove?.dataset.attachment) this.channel.intent({ type: 'removeAttachment', id: remove.dataset.attachment });
    });
  }

  focus(): void {
    this.input.focus();
  }

  /** Puts `text` in the message box (a starter prompt): the user finishes it and sends it. */
  fill(text: string): void {
    this.input.value = text;
    this.recallIndex = -1;
    this.channel.state.draft = text;
    this.channel.saveSoon();
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
    this.updateButtons();
  }

  /** Focus the model picker ("Pick another model" under a failed answer). */
  focusModel(): void {
    this.picker.focus();
  }

  /** The model picker and its toggles follow the host's snapshot. */
  updatePicker(snapshot: Snapshot): void {
    this.picker.update(snapshot);
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.updateButtons();
  }

  /** Escape anywhere stops a running answer. */
  stop(): boolean {
    if (!this.busy) return false;
    this.channel.intent({ type: 'stop' });
    return true;
  }

  /** The selected model decides whether images may be attached; the button says why not. */
  updateModel(model: ChatModelView | undefined, maxBytes: number | undefined): void {
    // A note about the previous model (e.g. "does not take images") no longer applies.
    if (model?.id !== this.model?.id) this.showNote('');
    this.model = model;
    this.maxBytes = maxBytes ?? 0;
    const allowed = model?.imageInput === true;
    const why = model
      ? (model.imageNote ?? (allowed ? '' : l10n.t('{0} does not take images.', model.id)))
      : l10n.t('Choose a model first.');
    this.imageButton.setAttribute('aria-disabled', String(!allowed));
    this.imageButton.classList.toggle('is-disabled', !allowed);
    this.imageButton.title = allowed
      ? l10n.t('Attach images (PNG, JPEG, GIF, WebP); you can also paste or drop them here')
      : why;
    this.imageButton.setAttribute(
      'aria-label',
      allowed ? l10n.t('Attach images (or paste or drop them here)') : l10n.t('Attach images: unavailable. {0}', why),
    );
    this.updateButtons();
  }

  updateAttachments(attachments: Snapshot['attachments']): void {
    this.pendingImages = attachments.filter((a) => a.image).length;
    const key = JSON.stringify(attachments);
    if (key === this.attachmentsKey) {
      this.updateButtons();
      return;
    }
    this.attachmentsKey = key;
    this.chips.replaceChildren(
      ...attachments.map((a) => {
        const remove = button('×', { className: 'chip-remove', ariaLabel: l10n.t('Remove attachment {0}', a.label) });
        remove.dataset.attachment = a.id;
        return a.image ? imageChip(a.label, a.image, remove) : textChip(a, remove);
      }),
    );
    setHidden(this.chips, attachments.length === 0);
    this.updateButtons();
  }

  /** Files dropped anywhere on the view: images from the OS (as files) or the explorer (as URIs). */
  private listenForDrops(): void {
    const carries = (data: DataTransfer | null) =>
      !!data && Array.from(data.types).some((t) => t === 'Files' || /uri-list|resourceurls/i.test(t));
    document.addEventListener('dragover', (event) => {
      if (!carries(event.dataTransfer)) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
      this.el.classList.add('drop-target');
    });
    document.addEventListener('dragleave', (event) => {
      if (event.relatedTarget === null) this.el.classList.remove('drop-target');
    });
    document.addEventListener('drop', (event) => {
      this.el.classList.remove('drop-target');
      const data = event.dataTransfer;
      if (!carries(data) || !data) return;
      const files = Array.from(data.files);
      if (files.length) {
        event.preventDefault();
        const images = files.filter((f) => IMAGE_FILE.test(f.type) || IMAGE_FILE.test(f.name));
        if (images.length < files.length)
          this.showNote(
            l10n.t(
              'Only images can be dropped here (PNG, JPEG, GIF, WebP); {0} other file(s) ignored.',
              formatNumber(files.length - images.length),
            ),
          );
        this.attachFiles(images);
        return;
      }
      // Files from the explorer come as URIs; a web link dragged from an answer is not a file.
      const uris = droppedUris(data).filter((uri) => !/^(https?|data|javascript|mailto):/i.test(uri));
      if (!uris.length) return;
      event.preventDefault();
      if (this.imagesRefused()) return;
      this.channel.intent({ type: 'attachImageUris', uris });
    });
  }

  private attachFiles(files: File[]): void {
    if (!files.length || this.imagesRefused()) return;
    for (const file of files) {
      const name = file.name || l10n.t('pasted image');
      if (this.maxBytes && file.size > this.maxBytes) {
        this.showNote(
          l10n.t(
            '{0} is {1}, over the {2} limit for chat images (setting "modelGateway.chat.imageMaxBytes").',
            name,
            formatBytes(file.size),
            formatBytes(this.maxBytes),
          ),
        );
        continue;
      }
      const reader = new FileReader();
      reader.addEventListener('load', () => {
        const url = typeof reader.result === 'string' ? reader.result : '';
        const comma = url.indexOf(',');
        if (comma < 0) return;
        this.channel.intent({ type: 'attachImage', name, data: url.slice(comma + 1) });
      });
      reader.addEventListener('error', () => this.showNote(l10n.t('{0} could not be read.', name)));
      reader.readAsDataURL(file);
    }
  }

  /** True (and says why) when the selected model does not take images. */
  private imagesRefused(): boolean {
    if (this.model?.imageInput) return false;
    this.showNote(
      this.model?.imageNote ??
        (this.model ? l10n.t('{0} does not take images.', this.model.id) : l10n.t('Choose a model first.')),
    );
    return true;
  }

  private showNote(text: string): void {
    setText(this.note, text);
    setHidden(this.note, !text);
  }

  /**
   * Up in an empty input (or one showing a recalled question) shows the previous question, Down the
   * next one and then an empty input again, as in a terminal or VS Code's own chat. Returns whether
   * it did (otherwise the key moves the caret as usual).
   */
  private recall(step: 1 | -1): boolean {
    if (this.input.value !== '' && this.recallIndex < 0) return false;
    const questions = this.earlierQuestions();
    const next = this.recallIndex + step;
    if (next < -1 || next >= questions.length) return this.recallIndex >= 0;
    this.recallIndex = next;
    this.input.value = next < 0 ? '' : (questions[questions.length - 1 - next] ?? '');
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
    this.channel.state.draft = this.input.value;
    this.channel.saveSoon();
    this.updateButtons();
    return true;
  }

  private send(): void {
    const text = this.input.value;
    if (this.busy || !text.trim() || this.blocked !== undefined) return;
    if (this.pendingImages && !this.model?.imageInput) {
      this.imagesRefused();
      return;
    }
    if (this.channel.conversation === undefined) return;
    // Kept until the host says it stored the question: a refusal puts it back (see settle).
    const sendId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    this.channel.state.pending.push({ id: sendId, text });
    this.channel.intent({ type: 'send', text, sendId });
    this.recallIndex = -1;
    this.input.value = '';
    this.channel.state.draft = '';
    this.channel.saveSoon();
    this.showNote('');
    this.updateButtons();
  }

  /**
   * The host stored the question of send `sendId` (the text may go), or refused it: the text goes
   * back into the box, before whatever was typed since.
   */
  settle(sendId: string, accepted: boolean): void {
    const pending = this.channel.state.pending;
    const at = pending.findIndex((p) => p.id === sendId);
    if (at < 0) return;
    const [sent] = pending.splice(at, 1);
    if (!accepted && sent) this.putBack(sent.text);
    this.channel.saveSoon();
  }

  /**
   * After a reload, sends the host never answered: each goes back into the box unless the
   * conversation holds it as a question (it was stored after all).
   */
  restorePending(questions: readonly string[]): void {
    const pending = this.channel.state.pending.splice(0);
    for (const sent of pending) if (!questions.includes(sent.text)) this.putBack(sent.text);
    if (pending.length) this.channel.saveSoon();
  }

  /** Text the host gives back (a send or an edit it did not store) goes into the box, before whatever was typed since. */
  putBack(text: string): void {
    const typed = this.input.value;
    this.input.value = typed.trim() ? `${text}\n${typed}` : text;
    this.recallIndex = -1;
    this.channel.state.draft = this.input.value;
    this.channel.saveSoon();
    this.updateButtons();
  }

  /**
   * Why Send waits whatever is typed (no key, or the conversation's model is gone until another is
   * picked); undefined: it does not. `shownBeside`: the reason is already on screen next to Send
   * (the setup notice), so the note below does not repeat it.
   */
  setBlocked(reason: string | undefined, shownBeside = false): void {
    this.blocked = reason;
    this.blockedShown = shownBeside;
    this.updateButtons();
  }

  private updateButtons(): void {
    const imagesBlocked = this.pendingImages > 0 && this.model !== undefined && !this.model.imageInput;
    this.sendButton.disabled = this.busy || !this.input.value.trim() || imagesBlocked || this.blocked !== undefined;
    // A Send that cannot be used says why next to it, not only in its tooltip.
    const why = this.blockedShown
      ? ''
      : (this.blocked ??
        (imagesBlocked && this.model
          ? l10n.t('{0} does not take images: remove the image or pick a model that does.', this.model.id)
          : ''));
    if (why) this.showNote(why);
    else if (this.blockedNote && this.note.textContent === this.blockedNote) this.showNote('');
    this.blockedNote = why;
    this.sendButton.title = why || this.blocked || l10n.t('Send the message (Enter)');
    setHidden(this.stopButton, !this.busy);
    setHidden(this.sendButton, this.busy);
  }
}

/** URIs of a drop from VS Code's explorer (`text/uri-list`, VS Code's own lists) or another app. */
function droppedUris(data: DataTransfer): string[] {
  const out = new Set<string>();
  for (const type of ['application/vnd.code.uri-list', 'text/uri-list']) {
    for (const line of data.getData(type).split(/\r?\n/)) {
      const uri = line.trim();
      if (uri && !uri.startsWith('#')) out.add(uri);
    }
  }
  const resources = data.getData('ResourceURLs');
  if (resources) {
    try {
      for (const uri of JSON.parse(resources) as unknown[]) if (typeof uri === 'string') out.add(uri);
    } catch {
      // Not the JSON list VS Code writes: ignored.
    }
  }
  return [...out];
}
