/**
 * The Images tab: route (Images API or Responses with the image tool), models, prompt, size,
 * count or streaming, Generate / Cancel, and the running job with its partial preview.
 */
import * as l10n from '@vscode/l10n';
import type { ImageJobView, MediaSnapshot } from '../../shared/mediaProtocol';
import { button, h, setHidden, setText } from '../shared/dom';
import type { MediaChannel } from './channel';
import { field, fillList, fillModels, persist } from './fields';
import { formatDuration, formatNumber } from '../../shared/format';
import { displaySizeText, imageWireSize, parseSize } from '../../shared/mediaSize';

const COMMON_SIZES = ['1024 × 1024', '1536 × 1024', '1024 × 1536', '512 × 512', '256 × 256'];

export class ImagesTab {
  readonly el: HTMLElement;
  private readonly route = h('select', { className: 'select', attrs: { name: 'route' } });
  private readonly model = h('select', { className: 'select model-select', attrs: { name: 'imageModel' } });
  private readonly outer = h('select', { className: 'select outer-select', attrs: { name: 'outerModel' } });
  private readonly outerField: HTMLElement;
  private readonly prompt = h('textarea', {
    className: 'input prompt',
    attrs: { rows: '4', placeholder: l10n.t('Describe the image…'), name: 'imagePrompt' },
  });
  private readonly size = h('input', {
    className: 'input size',
    attrs: { type: 'text', list: 'image-sizes', spellcheck: 'false', autocomplete: 'off', name: 'imageSize' },
  });
  private readonly sizes = h('datalist', { attrs: { id: 'image-sizes' } });
  private readonly count = h('input', {
    className: 'input count',
    attrs: { type: 'number', min: '1', max: '10', step: '1', name: 'imageCount' },
  });
  private readonly countField: HTMLElement;
  private readonly stream = h('input', { attrs: { type: 'checkbox', name: 'stream' } });
  private readonly streamField: HTMLElement;
  private readonly sizeProblem = h('div', { className: 'problem', attrs: { role: 'alert' } });
  private readonly generate = button(l10n.t('Generate'), { className: 'btn', ariaLabel: l10n.t('Generate the image') });
  private readonly cancel = button(l10n.t('Cancel'), {
    className: 'btn btn-secondary',
    ariaLabel: l10n.t('Cancel image generation'),
  });
  private readonly routeNote = h('p', { className: 'note' });
  private readonly job = h('section', {
    className: 'job',
    attrs: { 'aria-label': l10n.t('Current image'), 'aria-live': 'polite' },
  });
  private readonly jobStatus = h('div', { className: 'job-status' });
  private readonly jobElapsed = h('span', { className: 'elapsed' });
  private readonly preview = h('img', { className: 'preview', attrs: { alt: l10n.t('Partial image as it arrives') } });
  private snapshot?: MediaSnapshot;
  private jobKey = '';

  constructor(private readonly channel: MediaChannel) {
    this.route.append(
      h('option', { text: l10n.t('Image model directly'), attrs: { value: 'images' } }),
      h('option', { text: l10n.t('Through a language model'), attrs: { value: 'responses' } }),
    );
    this.outerField = field(l10n.t('Language model'), this.outer);
    this.countField = field(l10n.t('Number of images'), this.count);
    this.streamField = h('label', { className: 'check' }, this.stream, ' ', l10n.t('Stream partial images'));
    this.preview.hidden = true;
    this.cancel.hidden = true;
    this.job.hidden = true;
    this.job.append(h('div', { className: 'row' }, this.jobStatus, this.jobElapsed), this.preview);
    fillList(this.sizes, COMMON_SIZES);

    this.el = h(
      'div',
      { className: 'tab-body' },
      h(
        'div',
        { className: 'grid' },
        field(l10n.t('How to generate'), this.route),
        field(l10n.t('Image model'), this.model),
        this.outerField,
      ),
      this.routeNote,
      field(l10n.t('Prompt'), this.prompt),
      h(
        'div',
        { className: 'grid' },
        field(l10n.t('Size (width × height)'), this.size, this.sizeProblem),
        this.countField,
        h('div', { className: 'field field-check' }, this.streamField),
      ),
      this.sizes,
      h(
        'div',
        { className: 'row actions' },
        this.generate,
        this.cancel,
        h('span', { className: 'hint', text: l10n.t('Ctrl+Enter generates') }),
      ),
      this.job,
    );

    persist(channel, 'route', this.route, () => this.updateVisibility());
    persist(channel, 'imageModel', this.model);
    persist(channel, 'outerModel', this.outer);
    persist(channel, 'imagePrompt', this.prompt, () => this.updateButtons());
    persist(channel, 'imageSize', this.size, () => this.validate());
    this.size.value = displaySizeText(this.size.value);
    persist(channel, 'imageCount', this.count);
    persist(channel, 'stream', this.stream);
    this.generate.addEventListener('click', () => this.submit());
    this.cancel.addEventListener('click', () => channel.post({ type: 'cancelImage' }));
    this.prompt.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.submit();
      }
    });
  }

  update(s: MediaSnapshot): void {
    const first = !this.snapshot;
    this.snapshot = s;
    const d = this.channel.state.fields;
    if (first) {
      this.route.value = d.route ?? s.defaults.route;
      // Sizes saved or set in another notation (`1024x1024`) are shown in the studio's own.
      if (!this.size.value) this.size.value = displaySizeText(d.imageSize ?? s.defaults.imageSize);
      if (!this.count.value) this.count.value = d.imageCount ?? String(s.defaults.imageCount);
      if (d.stream === undefined) this.stream.checked = s.defaults.stream;
    }
    fillModels(this.model, s.imageModels, d.imageModel, s.defaults.imageModel, l10n.t('No image models for this key'));
    fillModels(
      this.outer,
      s.outerModels,
      d.outerModel,
      s.defaults.outerModel,
      l10n.t('No language model here can have images drawn'),
    );
    this.updateVisibility();
    this.renderJob(s.imageJob);
    this.updateButtons();
  }

  focus(): void {
    this.prompt.focus();
  }

  /** Keeps the elapsed time of a running job moving. */
  tick(now: number): void {
    const job = this.snapshot?.imageJob;
    if (job?.state === 'running') setText(this.jobElapsed, formatDuration(now - job.startedAt));
  }

  private updateVisibility(): void {
    const responses = this.route.value === 'responses';
    setHidden(this.outerField, !responses);
    setHidden(this.countField, responses);
    setHidden(this.streamField, !responses);
    setText(
      this.routeNote,
      responses
        ? l10n.t(
            'A language model reads your prompt and has the image model draw the picture; it may write a few words alongside.',
          )
        : l10n.t('The image model draws the pictures from your prompt; each one is saved in the format it arrives in.'),
    );
    this.validate();
  }

  private validate(): boolean {
    const ok = !!parseSize(this.size.value);
    setText(this.sizeProblem, ok ? '' : l10n.t('Write the size as width × height in pixels, e.g. 1024 × 1024.'));
    this.size.setAttribute('aria-invalid', String(!ok));
    this.updateButtons();
    return ok;
  }

  private updateButtons(): void {
    const running = this.snapshot?.imageJob?.state === 'running';
    const responses = this.route.value === 'responses';
    const ready =
      !!this.model.value &&
      (!responses || !!this.outer.value) &&
      !!this.prompt.value.trim() &&
      !!parseSize(this.size.value);
    this.generate.disabled = running || !ready;
    setHidden(this.cancel, !running);
  }

  private submit(): void {
    const size = parseSize(this.size.value);
    if (this.generate.disabled || !this.validate() || !size) return;
    const route = this.route.value === 'responses' ? 'responses' : 'images';
    const n = Math.max(1, Math.min(10, Math.floor(Number(this.count.value) || 1)));
    this.channel.post({
      type: 'generateImage',
      request: {
        route,
        model: this.model.value,
        ...(route === 'responses' ? { outerModel: this.outer.value } : {}),
        prompt: this.prompt.value,
        n,
        // The Images API and the image tool take `1024x1024`, whatever notation was typed.
        size: imageWireSize(size),
        stream: this.stream.checked,
      },
    });
    this.generate.disabled = true;
  }

  private renderJob(job: ImageJobView | undefined): void {
    const key = JSON.stringify(job ?? null);
    if (key === this.jobKey) return;
    this.jobKey = key;
    setHidden(this.job, !job);
    this.updateButtons();
    if (!job) return;
    this.job.className = `job job-${job.state}`;
    const generating = job.outerModel
      ? l10n.t('Generating with {0} through {1}…', job.model, job.outerModel)
      : l10n.t('Generating with {0}…', job.model);
    const text =
      job.state === 'running'
        ? job.partial
          ? l10n.t('{0} (preview {1})', generating, formatNumber(job.partial.index + 1))
          : generating
        : job.state === 'done'
          ? l10n.t('Saved {0}', job.files.join(', '))
          : job.state === 'cancelled'
            ? l10n.t('Cancelled. Nothing was saved.')
            : l10n.t('Failed: {0}', job.message ?? l10n.t('no reason given'));
    setText(this.jobStatus, text);
    setText(this.jobElapsed, formatDuration((job.finishedAt ?? Date.now()) - job.startedAt));
    if (job.partial && job.state === 'running') {
      if (this.preview.getAttribute('src') !== job.partial.src) this.preview.src = job.partial.src;
      this.preview.hidden = false;
    } else {
      this.preview.hidden = true;
      this.preview.removeAttribute('src');
    }
  }
}
