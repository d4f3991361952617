/**
 * The video task list and the gallery. Both are keyed lists: an entry's element is rebuilt only
 * when its data changed, so thumbnails do not flicker and focus stays on an untouched row.
 */
import * as l10n from '@vscode/l10n';
import type { GalleryItemView, MediaWebviewMessage, TaskView } from '../../shared/mediaProtocol';
import { button, h, setText } from '../shared/dom';
import type { MediaChannel } from './channel';
import { formatBytes, formatDuration, formatWhen } from '../../shared/format';
import { clip } from './format';
import { displaySize, displaySizeText, parseSize } from '../../shared/mediaSize';

type TaskAction = Extract<MediaWebviewMessage, { type: 'task' }>['action'];
type ItemAction = Extract<MediaWebviewMessage, { type: 'item' }>['action'];

class KeyedList<T> {
  private readonly rows = new Map<string, { key: string; el: HTMLElement }>();

  constructor(
    readonly el: HTMLElement,
    private readonly empty: HTMLElement,
    private readonly id: (item: T) => string,
    private readonly render: (item: T) => HTMLElement,
  ) {}

  update(items: T[]): void {
    const seen = new Set<string>();
    const ordered: HTMLElement[] = [];
    for (const item of items) {
      const id = this.id(item);
      seen.add(id);
      const key = JSON.stringify(item);
      let row = this.rows.get(id);
      if (!row || row.key !== key) {
        const el = this.render(item);
        // Keep keyboard focus on the same button when a row is rebuilt.
        const focused = row?.el.contains(document.activeElement) ? (document.activeElement as HTMLElement | null)?.dataset.act : undefined;
        row?.el.replaceWith(el);
        row = { key, el };
        this.rows.set(id, row);
        if (focused) el.querySelector<HTMLElement>(`[data-act="${focused}"]`)?.focus();
      }
      ordered.push(row.el);
    }
    for (const [id, row] of this.rows) {
      if (!seen.has(id)) {
        row.el.remove();
        this.rows.delete(id);
      }
    }
    ordered.forEach((el, i) => {
      if (this.el.children[i] !== el) this.el.insertBefore(el, this.el.children[i] ?? null);
    });
    this.empty.hidden = items.length > 0;
  }
}

export class TaskList {
  readonly el: HTMLElement;
  private readonly list = h('ul', { className: 'tasks', attrs: { 'aria-label': l10n.t('Video tasks') } });
  private readonly keyed: KeyedList<TaskView>;
  private readonly empty = h('p', { className: 'empty', text: l10n.t('No video tasks yet. Submitted tasks are kept with this workspace and resume after a reload.') });

  constructor(private readonly channel: MediaChannel) {
    this.el = h('div', {}, this.empty, this.list);
    this.keyed = new KeyedList(this.list, this.empty, (t) => t.localId, (t) => this.row(t));
  }

  update(tasks: TaskView[]): void {
    this.keyed.update(tasks);
  }

  /** Elapsed times of unfinished tasks move every second without a host message. */
  tick(now: number): void {
    for (const el of this.list.querySelectorAll<HTMLElement>('[data-since]')) {
      setText(el, formatDuration(now - Number(el.dataset.since)));
    }
  }

  private row(t: TaskView): HTMLElement {
    const act = (label: string, action: TaskAction, aria: string, secondary = true) => {
      const b = button(label, { className: secondary ? 'btn-small' : 'btn', ariaLabel: l10n.t('{0}: {1}', aria, clip(t.prompt, 40)), act: action });
      b.addEventListener('click', () => this.channel.post({ type: 'task', action, id: t.localId }));
      return b;
    };
    const running = t.phase === 'submitting' || t.phase === 'running' || t.phase === 'downloading';
    const time = running ? h('span', { className: 'elapsed', text: formatDuration(Date.now() - t.createdAt), dataset: { since: String(t.createdAt) } }) : h('span', { className: 'elapsed', text: `${formatDuration((t.finishedAt ?? t.createdAt) - t.createdAt)}` });
    const progress = h('progress', { className: 'progress', attrs: { max: '100', 'aria-label': l10n.t('Progress') } });
    if (t.progress !== undefined && t.phase !== 'submitting') progress.value = t.progress;
    else progress.removeAttribute('value');
    const download = t.download ? ` ${t.download.total ? l10n.t('{0} of {1}', formatBytes(t.download.received), formatBytes(t.download.total)) : formatBytes(t.download.received)}` : '';
    const actions: HTMLElement[] = [];
    if (t.file) {
      actions.push(act(l10n.t('Open'), 'open', l10n.t('Open the video')), act(l10n.t('System Player'), 'openExternal', l10n.t('Open with the system player')), act(l10n.t('Reveal'), 'reveal', l10n.t('Reveal in the explorer')));
    }
    if (t.canCancel) actions.push(act(l10n.t('Cancel Polling'), 'cancel', l10n.t('Stop polling this task')));
    if (t.canResume) actions.push(act(l10n.t('Resume'), 'resume', l10n.t('Resume polling this task')));
    if (t.canRetryDownload) actions.push(act(l10n.t('Retry Download'), 'retryDownload', l10n.t('Fetch the link again and download')));
    if (t.canResubmit) actions.push(act(l10n.t('Resubmit'), 'resubmit', l10n.t('Submit again as a new task (billed)')));
    if (!running) actions.push(act(l10n.t('Forget'), 'forget', l10n.t('Remove from the list')));
    return h(
      'li',
      { className: `task task-${t.phase}`, dataset: { taskId: t.taskId ?? '', phase: t.phase } },
      h('div', { className: 'task-head' }, h('span', { className: 'task-prompt', text: clip(t.prompt, 120), attrs: { title: t.prompt } }), h('span', { className: `badge status-${t.phase}`, text: t.statusText })),
      h('div', { className: 'meta' }, `${t.model} · ${displaySizeText(t.size)} · ${formatDuration(t.duration * 1000)} · `, time, t.taskId ? ` · ${t.taskId}` : '', download),
      t.phase === 'succeeded' ? null : progress,
      // The status says "Failed: <reason>"; the full account (what to do next) follows.
      t.error && !t.statusText.endsWith(t.error.message) ? h('div', { className: 'error-message', text: t.error.message, attrs: { role: t.phase === 'failed' ? 'alert' : 'status' } }) : null,
      t.file ? h('div', { className: 'path', text: t.file.label, attrs: { title: t.file.path } }) : null,
      h('div', { className: 'row item-actions' }, ...actions),
    );
  }
}

export class GalleryGrid {
  readonly el: HTMLElement;
  private readonly grid = h('ul', { className: 'gallery', attrs: { 'aria-label': l10n.t('Gallery') } });
  private readonly keyed: KeyedList<GalleryItemView>;
  private readonly empty: HTMLElement;

  constructor(
    private readonly channel: MediaChannel,
    private readonly kind: 'image' | 'video',
  ) {
    this.empty = h('p', { className: 'empty', text: kind === 'image' ? l10n.t('Generated images of this workspace appear here.') : l10n.t('Downloaded videos of this workspace appear here.') });
    this.el = h('section', { className: 'gallery-section' }, h('h2', { className: 'section-title', text: l10n.t('Gallery') }), this.empty, this.grid);
    this.keyed = new KeyedList(this.grid, this.empty, (i) => i.id, (i) => this.card(i));
  }

  update(items: GalleryItemView[]): void {
    this.keyed.update(items.filter((i) => i.kind === this.kind));
  }

  private card(item: GalleryItemView): HTMLElement {
    const act = (label: string, action: ItemAction, aria: string) => {
      const b = button(label, { className: 'btn-small', ariaLabel: l10n.t('{0}: {1}', aria, item.label), act: action });
      b.addEventListener('click', () => this.channel.post({ type: 'item', action, id: item.id }));
      return b;
    };
    const thumb = item.src
      ? h('img', { className: 'thumb', attrs: { src: item.src, alt: clip(item.prompt, 100), loading: 'lazy' } })
      : h('div', { className: `thumb thumb-${item.kind}`, text: item.exists ? (item.kind === 'video' ? '▶ MP4' : l10n.t('image')) : l10n.t('file missing'), attrs: { 'aria-hidden': 'true' } });
    const actions = item.exists
      ? [
          act(l10n.t('Open'), 'open', l10n.t('Open')),
          ...(item.kind === 'video' ? [act(l10n.t('System Player'), 'openExternal', l10n.t('Open with the system player'))] : []),
          act(l10n.t('Reveal'), 'reveal', l10n.t('Reveal in the explorer')),
          act(l10n.t('Copy Path'), 'copyPath', l10n.t('Copy the path')),
          act(l10n.t('Insert Link'), 'insertLink', l10n.t('Insert a Markdown link at the cursor')),
          ...(item.kind === 'image' ? [act(l10n.t('Ask in Chat'), 'askInChat', l10n.t('Attach to the next chat message'))] : []),
          act(l10n.t('Remove'), 'remove', l10n.t('Remove from the gallery (the file stays)')),
        ]
      : [act(l10n.t('Remove'), 'remove', l10n.t('Remove from the gallery'))];
    return h(
      'li',
      { className: `card${item.exists ? '' : ' card-missing'}`, dataset: { path: item.label } },
      thumb,
      h(
        'div',
        { className: 'card-body' },
        h('div', { className: 'card-prompt', text: clip(item.prompt, 160), attrs: { title: item.prompt } }),
        h('div', { className: 'meta' }, `${item.model} · `, h('span', { className: 'dimensions', text: dimensions(item) }), ` · ${formatWhen(item.createdAt)}`),
        h('div', { className: 'path', text: item.label, attrs: { title: item.label } }),
        h('div', { className: 'row item-actions' }, ...actions),
      ),
    );
  }
}

/**
 * What a card says about the file's size: the real pixels read from the saved file, with the size
 * asked for when it differs; "size unknown" when the file's header does not say.
 */
export function dimensions(item: GalleryItemView): string {
  if (item.pixels === undefined) return l10n.t('asked for {0}', displaySizeText(item.size));
  if (item.pixels === null) return item.exists ? l10n.t('size unknown') : l10n.t('asked for {0}', displaySizeText(item.size));
  const real = displaySize(item.pixels);
  const asked = parseSize(item.size);
  return asked && (asked.width !== item.pixels.width || asked.height !== item.pixels.height) ? l10n.t('{0} (asked for {1})', real, displaySize(asked)) : real;
}
