/**
 * One message in the list. The DOM is built once; `update` only touches the parts whose data
 * changed, and the answer / reasoning text goes through an incremental MarkdownView.
 */
import * as l10n from '@vscode/l10n';
import type { ChatMessageView } from '../../shared/protocol';
import { button, h, setHidden, setText } from '../shared/dom';
import { VIEW_SETTINGS } from '../../shared/protocol';
import { PROTOCOL_LABELS } from '../../shared/protocolNames';
import { textChip } from './attachmentChip';
import { errorAction, imageDetail, statusLabel, usageLine } from './labels';
import type { RenderOptions } from './markdown';
import { MarkdownView } from './markdownView';
import { iconButton } from './icons';
import type { IntentBody, UiState } from './chatChannel';

export interface MessageContext {
  ui: UiState;
  saveUi(): void;
  /** Posts an intent about the conversation shown (see ChatChannel.intent). */
  intent(body: IntentBody): void;
  renderOptions: RenderOptions;
}

export interface MessageFlags {
  isLastUser: boolean;
  isLastAssistant: boolean;
  busy: boolean;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

export class MessageView {
  readonly el: HTMLElement;
  message: ChatMessageView;
  private readonly head: HTMLElement;
  private readonly meta: HTMLElement;
  private readonly status: HTMLElement;
  private readonly usage: HTMLElement;
  private readonly actions: HTMLElement;
  private readonly copyButton: HTMLButtonElement;
  private readonly lastButton: HTMLButtonElement;
  // Assistant parts.
  private answer: MarkdownView | undefined;
  private reasoning: MarkdownView | undefined;
  private details: HTMLDetailsElement | undefined;
  private summary: HTMLElement | undefined;
  private waiting: HTMLElement | undefined;
  private streamMark: HTMLElement | undefined;
  private sources: HTMLElement | undefined;
  // User parts.
  private userText: HTMLElement | undefined;
  private attachments: HTMLElement | undefined;
  private images: HTMLElement | undefined;
  private editor: HTMLElement | undefined;

  private renderedMeta = '';
  private renderedStatus = '';
  private retryButton: HTMLElement | undefined;
  /** Continue, on an answer cut at the max tokens limit; shown only on the last answer. */
  private continueButton: HTMLElement | undefined;
  private flags: MessageFlags | undefined;
  private renderedUsage = '';
  private renderedAttachments = '';
  private renderedImages = '';
  private renderedSources = '';
  private renderOptions: RenderOptions;

  constructor(
    message: ChatMessageView,
    private readonly ctx: MessageContext,
  ) {
    this.message = message;
    this.renderOptions = ctx.renderOptions;
    const isUser = message.role === 'user';
    this.el = h('article', {
      className: `msg ${isUser ? 'msg-user' : 'msg-assistant'}`,
      dataset: { id: message.id },
      attrs: { 'aria-label': isUser ? l10n.t('You') : l10n.t('Assistant') },
    });
    this.meta = h('span', { className: 'msg-meta' });
    this.head = h(
      'div',
      { className: 'msg-head' },
      h('span', { className: 'msg-role', text: isUser ? l10n.t('You') : l10n.t('Assistant') }),
      this.meta,
    );
    this.status = h('div', { className: 'msg-status' });
    this.usage = h('div', { className: 'msg-usage' });
    // Icons that show while the pointer is over the message or the keyboard is in it (chat.css);
    // they stay in the tab order, so a keyboard user reaches them and they appear.
    this.copyButton = iconButton('copy', {
      act: 'copy-msg',
      label: isUser ? l10n.t('Copy your message') : l10n.t('Copy the answer'),
    });
    this.lastButton = isUser
      ? iconButton('edit', { act: 'edit', label: l10n.t('Edit and resend your last message') })
      : iconButton('regenerate', { act: 'regenerate', label: l10n.t('Regenerate the last answer') });
    this.actions = h(
      'div',
      {
        className: 'msg-actions',
        attrs: {
          role: 'toolbar',
          'aria-label': isUser ? l10n.t('Actions for your message') : l10n.t('Actions for the answer'),
        },
      },
      this.copyButton,
      this.lastButton,
    );
    this.el.append(this.head);

    if (isUser) {
      this.attachments = h('div', { className: 'chips msg-attachments' });
      this.images = h('div', {
        className: 'msg-images',
        attrs: { role: 'list', 'aria-label': l10n.t('Images sent with this message') },
      });
      this.userText = h('div', { className: 'user-text' });
      this.el.append(this.attachments, this.images, this.userText);
    } else {
      this.reasoning = new MarkdownView(this.renderOptions, 'md reasoning-body');
      this.summary = h('summary', { text: l10n.t('Thinking') });
      this.details = h('details', { className: 'reasoning' }, this.summary, this.reasoning.el);
      this.summary.addEventListener('click', () => {
        // Runs before the element toggles: the new state is the opposite of the current one.
        this.ctx.ui.reasoning[this.message.id] = !(this.details as HTMLDetailsElement).open;
        this.ctx.saveUi();
      });
      this.answer = new MarkdownView(this.renderOptions, 'md msg-body');
      this.waiting = h('div', { className: 'waiting', text: l10n.t('Waiting for the answer…') });
      // Where the text grows while it arrives: a pulsing mark at the answer's end (chat.css), named
      // for screen readers; gone once the answer has ended.
      this.streamMark = h(
        'div',
        { className: 'stream-mark', attrs: { role: 'img', 'aria-label': l10n.t('The answer is still being written') } },
        h('span'),
        h('span'),
        h('span'),
      );
      this.sources = h('div', { className: 'sources' });
      this.el.append(this.details, this.waiting, this.answer.el, this.streamMark, this.sources);
    }
    this.el.append(this.status, this.usage, this.actions);
    this.update(message);
  }

  get id(): string {
    return this.message.id;
  }

  update(message: ChatMessageView): void {
    this.message = message;
    const streaming = message.status === 'streaming';
    if (streaming) this.el.setAttribute('aria-busy', 'true');
    else this.el.removeAttribute('aria-busy');

    if (message.role === 'user') this.updateUser(message);
    else this.updateAssistant(message, streaming);

    const meta = [message.model, message.protocol ? PROTOCOL_LABELS[message.protocol] : undefined]
      .filter(Boolean)
      .join(' · ');
    if (meta !== this.renderedMeta) {
      this.renderedMeta = meta;
      setText(this.meta, meta);
    }
    this.updateStatus(message);
    const usage = usageLine(message.usage);
    if (usage !== this.renderedUsage) {
      this.renderedUsage = usage;
      setText(this.usage, usage);
      setHidden(this.usage, !usage);
    }
    setHidden(this.copyButton, streaming || (!message.text && message.role === 'assistant'));
  }

  setFlags(flags: MessageFlags): void {
    const now = this.flags;
    // Called for every rendered message when the list changes: most keep their flags.
    if (
      now &&
      now.isLastUser === flags.isLastUser &&
      now.isLastAssistant === flags.isLastAssistant &&
      now.busy === flags.busy
    )
      return;
    this.flags = flags;
    this.showRetry();
  }

  /** New rendering options (remote images allowed): everything markdown is rendered again. */
  setRenderOptions(options: RenderOptions): void {
    if (sameHosts(options.remoteImageHosts, this.renderOptions.remoteImageHosts)) return;
    this.renderOptions = options;
    this.answer?.reset(options);
    this.reasoning?.reset(options);
    this.update(this.message);
  }

  /** Inline editor for the last user message: Enter resends, Shift+Enter newline, Escape cancels. */
  startEdit(): void {
    if (this.message.role !== 'user' || this.editor) return;
    const textarea = h('textarea', {
      className: 'input',
      attrs: { 'aria-label': l10n.t('Edit your message'), rows: '3' },
    });
    textarea.value = this.message.text;
    const save = button(l10n.t('Save & Resend'), { className: 'btn' });
    const cancel = button(l10n.t('Cancel'), { className: 'btn btn-secondary' });
    const editor = h('div', { className: 'msg-editor' }, textarea, h('div', { className: 'row' }, save, cancel));
    const finish = (): void => {
      editor.remove();
      this.editor = undefined;
      setHidden(this.userText as HTMLElement, false);
      setHidden(this.lastButton, false);
      this.lastButton.focus();
    };
    const submit = (): void => {
      const text = textarea.value;
      if (!text.trim()) return;
      this.ctx.intent({ type: 'editLast', text, messageId: this.message.id });
      finish();
    };
    save.addEventListener('click', submit);
    cancel.addEventListener('click', finish);
    textarea.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      } else if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        finish();
      }
    });
    this.editor = editor;
    setHidden(this.userText as HTMLElement, true);
    setHidden(this.lastButton, true);
    (this.userText as HTMLElement).after(editor);
    textarea.focus();
    textarea.setSelectionRange(textarea.value.length, textarea.value.length);
  }

  private updateUser(message: ChatMessageView): void {
    setText(this.userText as HTMLElement, message.text);
    this.updateImages(message);
    const key = JSON.stringify(message.attachments ?? []);
    if (key === this.renderedAttachments) return;
    this.renderedAttachments = key;
    const list = this.attachments as HTMLElement;
    list.replaceChildren(...(message.attachments ?? []).map((a) => textChip(a)));
    setHidden(list, !message.attachments?.length);
  }

  private updateAssistant(message: ChatMessageView, streaming: boolean): void {
    const reasoning = message.reasoning ?? '';
    const details = this.details as HTMLDetailsElement;
    setHidden(details, !reasoning);
    if (reasoning) {
      (this.reasoning as MarkdownView).update(reasoning, streaming);
      setText(this.summary as HTMLElement, streaming && !message.text ? l10n.t('Thinking…') : l10n.t('Thinking'));
      // Open while the model is thinking, collapsed once the answer is done, unless the user chose.
      const chosen = this.ctx.ui.reasoning[message.id];
      const open = chosen ?? streaming;
      if (details.open !== open) details.open = open;
    }
    (this.answer as MarkdownView).update(message.text, streaming);
    setHidden(this.waiting as HTMLElement, !(streaming && !message.text && !reasoning));
    setHidden(this.streamMark as HTMLElement, !(streaming && (message.text || reasoning)));
    this.updateSources(message);
  }

  /** Thumbnails of the images a question carried; a click opens the stored image in an editor. */
  private updateImages(message: ChatMessageView): void {
    const key = JSON.stringify(message.images ?? []);
    if (key === this.renderedImages) return;
    this.renderedImages = key;
    const list = this.images as HTMLElement;
    list.replaceChildren(
      ...(message.images ?? []).map((image) => {
        const detail = imageDetail(image);
        const picture = image.src
          ? h('img', {
              className: 'thumb',
              attrs: { src: image.src, alt: `${image.name} (${detail})`, loading: 'lazy' },
            })
          : h('span', { className: 'thumb thumb-missing', text: image.name });
        const open = h(
          'button',
          {
            className: 'thumb-button',
            attrs: {
              type: 'button',
              'aria-label': l10n.t('Open image {0} ({1})', image.name, detail),
              title: `${image.name}: ${detail}`,
            },
          },
          picture,
        );
        open.dataset.act = 'open-image';
        open.dataset.image = image.id;
        return h(
          'div',
          { className: 'msg-image', attrs: { role: 'listitem' } },
          open,
          h('span', { className: 'msg-image-label', text: `${image.name} · ${detail}` }),
        );
      }),
    );
    setHidden(list, !message.images?.length);
  }

  /** The sources a web search brought, as numbered links, and what was searched for. */
  private updateSources(message: ChatMessageView): void {
    const citations = message.citations ?? [];
    const searches = message.searches ?? [];
    const key = JSON.stringify([citations, searches]);
    if (key === this.renderedSources) return;
    this.renderedSources = key;
    const box = this.sources as HTMLElement;
    const parts: Node[] = [];
    if (searches.length)
      parts.push(
        h('div', {
          className: 'searched',
          text: l10n.t('Searched the web for {0}', searches.map((q) => `“${q}”`).join(', ')),
        }),
      );
    if (citations.length) {
      parts.push(h('div', { className: 'sources-title', text: l10n.t('Sources') }));
      parts.push(
        h(
          'ol',
          { className: 'source-list' },
          ...citations.map((c) => {
            const host = hostOf(c.url);
            // Only web links become links; anything else is shown, never made clickable.
            const label = c.title || host || c.url;
            const link = /^https?:\/\//i.test(c.url)
              ? h('a', { text: label, attrs: { href: c.url, title: c.url } })
              : h('span', { text: label });
            return h(
              'li',
              {},
              link,
              host && label !== host ? h('span', { className: 'source-host', text: ` ${host}` }) : null,
            );
          }),
        ),
      );
    }
    box.replaceChildren(...parts);
    setHidden(box, parts.length === 0);
  }

  /**
   * Retry re-runs an answer, so it is offered only on the last answer and not while one is written;
   * where it is offered, Regenerate (which does the same) is not. Edit goes with the last question.
   */
  private showRetry(): void {
    const flags = this.flags;
    if (!flags) return;
    const retry = Boolean(this.retryButton) && flags.isLastAssistant && !flags.busy;
    if (this.retryButton) setHidden(this.retryButton, !retry);
    if (this.continueButton) setHidden(this.continueButton, !flags.isLastAssistant || flags.busy);
    const isLast = this.message.role === 'user' ? flags.isLastUser : flags.isLastAssistant;
    // The last answer's actions stay in sight at its end (chat.css); the others show on hover or focus.
    this.el.classList.toggle('msg-last', this.message.role === 'assistant' && flags.isLastAssistant);
    setHidden(this.lastButton, !isLast || flags.busy || this.editor !== undefined || retry);
    setHidden(
      this.actions,
      Array.from(this.actions.children).every((c) => (c as HTMLElement).hidden),
    );
  }

  private updateStatus(message: ChatMessageView): void {
    const label = statusLabel(message);
    const error = message.error;
    const atLimit = message.role === 'assistant' && message.status === 'done' && message.finishReason === 'length';
    const key = JSON.stringify([label, error, atLimit]);
    if (key === this.renderedStatus) return;
    this.renderedStatus = key;
    const parts: Node[] = [];
    this.retryButton = undefined;
    this.continueButton = undefined;
    if (label) parts.push(h('span', { className: `badge status-${message.status}`, text: label }));
    if (atLimit) {
      // Not an error and not the user's Stop: the model used all the room an answer has.
      parts.push(h('span', { className: 'badge status-length', text: l10n.t('Reached the answer length limit') }));
      parts.push(settingHint(l10n.t('Continue asks for the rest; the setting {0} raises the limit.', '\u0000')));
      this.continueButton = button(l10n.t('Continue'), {
        className: 'btn',
        act: 'continue',
        ariaLabel: l10n.t('Continue this answer where it stopped'),
        title: l10n.t('Ask the model to go on; the new text is added to this answer'),
      });
      parts.push(this.continueButton);
    }
    if (error) {
      parts.push(h('span', { className: 'error-message', text: error.message }));
      // The gateway's request id stands apart, whole and selectable: users quote it to its operator.
      if (error.requestId) {
        parts.push(
          h(
            'span',
            { className: 'error-request-id', attrs: { title: l10n.t("Quote this to the gateway's operator") } },
            l10n.t('Request ID: '),
            h('code', { text: error.requestId }),
          ),
        );
      }
      const action = errorAction(error.kind);
      if (action) {
        const actionButton = button(action.label, { className: 'btn', act: 'error-action' });
        actionButton.dataset.action = action.action;
        if (action.action === 'retry') this.retryButton = actionButton;
        parts.push(actionButton);
      }
    }
    this.status.replaceChildren(...parts);
    this.showRetry();
    setHidden(this.status, parts.length === 0);
    this.el.classList.toggle('msg-failed', Boolean(error));
  }
}

/** Whether two host lists allow the same hosts. */
export function sameHosts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((h) => b.includes(h));
}

/** The length-limit hint, with the setting it names as a link that opens it (`\u0000` marks where). */
function settingHint(text: string): HTMLElement {
  const [before = '', after = ''] = text.split('\u0000');
  const setting = VIEW_SETTINGS[0];
  const link = button(setting, {
    className: 'btn-link',
    act: 'open-setting',
    title: l10n.t('Open this setting'),
  });
  link.dataset.setting = setting;
  return h('span', { className: 'status-hint' }, before, link, after);
}
