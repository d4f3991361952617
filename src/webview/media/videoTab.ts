/**
 * The Video tab: model, prompt, size (shown as `832 × 480`, sent as the endpoint's `832*480`) and duration with the model's hints, the
 * billing note that is shown before anything is submitted, and the task list.
 */
import * as l10n from '@vscode/l10n';
import { videoBillingNote, type MediaSnapshot, type VideoModelView } from '../../shared/mediaProtocol';
import { button, h, setText } from '../shared/dom';
import type { MediaChannel } from './channel';
import { field, fillList, fillModels, persist } from './fields';
import { displaySize, displaySizeText, parseSize, videoWireSize, type PixelSize } from '../../shared/mediaSize';
import { formatDuration } from '../../shared/format';
import { TaskList } from './lists';

export class VideoTab {
  readonly el: HTMLElement;
  readonly tasks: TaskList;
  private readonly model = h('select', { className: 'select video-model-select', attrs: { name: 'videoModel' } });
  private readonly hint = h('p', { className: 'note' });
  private readonly prompt = h('textarea', {
    className: 'input prompt',
    attrs: { rows: '3', placeholder: l10n.t('Describe the video…'), name: 'videoPrompt' },
  });
  private readonly size = h('input', {
    className: 'input size',
    attrs: {
      type: 'text',
      list: 'video-sizes',
      spellcheck: 'false',
      autocomplete: 'off',
      placeholder: '832 × 480',
      name: 'videoSize',
    },
  });
  private readonly sizes = h('datalist', { attrs: { id: 'video-sizes' } });
  private readonly duration = h('input', {
    className: 'input count',
    attrs: { type: 'number', min: '1', step: '1', list: 'video-durations', name: 'videoDuration' },
  });
  private readonly durations = h('datalist', { attrs: { id: 'video-durations' } });
  private readonly problem = h('div', { className: 'problem', attrs: { role: 'alert' } });
  private readonly billing = h('p', { className: 'billing', attrs: { 'aria-live': 'polite' } });
  private readonly submitButton = button(l10n.t('Submit Video Task'), {
    className: 'btn',
    ariaLabel: l10n.t('Submit the video task (billed)'),
  });
  private snapshot?: MediaSnapshot;
  private modelShown = '';
  /** A submit was sent and no snapshot came back yet: a second click must not submit (and bill) twice. */
  private pending = false;

  constructor(private readonly channel: MediaChannel) {
    this.tasks = new TaskList(channel);
    this.el = h(
      'div',
      { className: 'tab-body' },
      field(l10n.t('Video model'), this.model),
      this.hint,
      field(l10n.t('Prompt'), this.prompt),
      h(
        'div',
        { className: 'grid' },
        field(l10n.t('Size (width × height)'), this.size),
        field(l10n.t('Duration (seconds)'), this.duration),
      ),
      this.problem,
      this.sizes,
      this.durations,
      this.billing,
      h(
        'div',
        { className: 'row actions' },
        this.submitButton,
        h('span', {
          className: 'hint',
          text: l10n.t('An accepted task is only queued: the video is made afterwards and may still fail.'),
        }),
      ),
      h('h2', { className: 'section-title', text: l10n.t('Tasks') }),
      this.tasks.el,
    );
    persist(channel, 'videoModel', this.model, () => this.applyHints(true));
    persist(channel, 'videoPrompt', this.prompt, () => this.refresh());
    persist(channel, 'videoSize', this.size, () => this.refresh());
    persist(channel, 'videoDuration', this.duration, () => this.refresh());
    // A draft saved in another notation (`832*480`) is shown in the studio's own.
    this.size.value = displaySizeText(this.size.value);
    this.submitButton.addEventListener('click', () => this.submit());
    this.prompt.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.submit();
      }
    });
  }

  update(s: MediaSnapshot): void {
    this.snapshot = s;
    this.pending = false;
    fillModels(
      this.model,
      s.videoModels,
      this.channel.state.fields.videoModel,
      s.defaults.videoModel,
      l10n.t('No video models for this key'),
    );
    this.applyHints(false);
    this.tasks.update(s.tasks);
  }

  tick(now: number): void {
    this.tasks.tick(now);
  }

  focus(): void {
    this.prompt.focus();
  }

  private selected(): VideoModelView | undefined {
    return this.snapshot?.videoModels.find((m) => m.id === this.model.value);
  }

  /** Offers the model's sizes and durations; fills them in when the model changed or nothing was typed. */
  private applyHints(changed: boolean): void {
    const m = this.selected();
    fillList(this.sizes, (m?.sizes ?? []).map(displaySizeText));
    fillList(this.durations, (m?.durations ?? []).map(String));
    if (m && (changed || this.modelShown !== m.id)) {
      // A model the user just picked brings its own values; otherwise only empty fields are filled.
      if (m.defaultSize && (changed || !this.size.value)) this.size.value = displaySizeText(m.defaultSize);
      if (m.defaultDuration !== undefined && (changed || !this.duration.value))
        this.duration.value = String(m.defaultDuration);
      this.modelShown = m.id;
    }
    const words = !m
      ? ''
      : m.hintSource === 'catalog'
        ? l10n.t(
            'From the model list: sizes {0}; durations {1}.',
            m.sizes.map(displaySizeText).join(', ') || l10n.t('not listed'),
            m.durations.map((d) => formatDuration(d * 1000)).join(', ') || l10n.t('not listed'),
          )
        : m.hintSource === 'verified'
          ? l10n.t(
              'Known to work with this model: {0} and {1}. Other sizes (e.g. {2}) may be refused; nothing is retried with other sizes.',
              m.sizes.map(displaySizeText).join(', '),
              m.durations.map((d) => formatDuration(d * 1000)).join(', '),
              displaySize({ width: 1280, height: 720 }),
            )
          : l10n.t(
              'Nothing is known about the sizes and durations this model accepts; the gateway will say if it rejects them.',
            );
    setText(this.hint, words);
    this.refresh();
  }

  private values(): { size: PixelSize; duration: number } | undefined {
    const size = parseSize(this.size.value);
    const duration = Number(this.duration.value);
    if (!size || !Number.isInteger(duration) || duration < 1) return undefined;
    return { size, duration };
  }

  private refresh(): void {
    const v = this.values();
    const typed = this.size.value.trim();
    const sizeOk = !!parseSize(typed);
    const problem = !typed
      ? ''
      : !sizeOk
        ? l10n.t('Write the size as width × height in pixels, e.g. 832 × 480.')
        : this.duration.value && !v
          ? l10n.t('The duration is a whole number of seconds.')
          : '';
    setText(this.problem, problem);
    this.size.setAttribute('aria-invalid', String(!!typed && !sizeOk));
    setText(
      this.billing,
      v && this.model.value
        ? videoBillingNote({ model: this.model.value, size: videoWireSize(v.size), duration: v.duration })
        : l10n.t('Video is billed by model, duration and resolution.'),
    );
    this.submitButton.disabled = this.pending || !v || !this.model.value || !this.prompt.value.trim();
  }

  private submit(): void {
    const v = this.values();
    if (this.submitButton.disabled || !v) return;
    // The video endpoint takes `832*480`, whatever notation was typed.
    this.channel.post({
      type: 'submitVideo',
      request: {
        model: this.model.value,
        prompt: this.prompt.value,
        size: videoWireSize(v.size),
        duration: v.duration,
      },
    });
    this.pending = true;
    this.submitButton.disabled = true;
  }
}
