/**
 * The video task list and the gallery. Both are keyed lists: an entry's element is rebuilt only
 * when its data changed, so thumbnails do not flicker and focus stays on an untouched row.
 */
import * as l10n from '@vscode/l10n';
import type { GalleryItemView, MediaWebviewMessage, TaskView } from '../../shared/mediaProtocol';
import { aroundSlot, button, h, setText, SLOT } from '../shared/dom';
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
        const focused = row?.el.contains(document.activeElement)
          ? (document.activeElement as HTMLElement | null)?.dataset.act
          : undefined;
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
  private readonly empty = h('p', {
    className: 'empty',
    text: l10n.t('No video tasks yet. Submitted tasks are kept with this workspace and resume after a reload.'),
  });

  constructor(private readonly channel: MediaChannel) {
    this.el = h('div', {}, this.empty, this.list);
    this.keyed = new KeyedList(
      this.list,
      this.empty,
      (t) => t.localId,
      (t) => this.row(t),
    );
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
      const b = button(label, {
        className: secondary ? 'btn-small' : 'btn',
        ariaLabel: l10n.t('{0}: {1}', aria, clip(t.prompt, 40)),
        act: action,
      });
      b.addEventListener('click', () => this.channel.post({ type: 'task', action, id: t.localId }));
      return b;
    };
    const running = t.phase === 'submitting' || t.phase === 'running' || t.phase === 'downloading';
    const failed = t.phase === 'failed';
    // Each figure says what it is: the video's length, and how long the task has taken.
    const time = running
      ? aroundSlot(
          l10n.t('elapsed {0}', SLOT),
          h('span', {
            className: 'elapsed',
            text: formatDuration(Date.now() - t.createdAt),
            dataset: { since: String(t.createdAt) },
          }),
        )
      : aroundSlot(
          l10n.t('took {0}', SLOT),
          h('span', { className: 'elapsed', text: formatDuration((t.finishedAt ?? t.createdAt) - t.createdAt) }),
        );
    const progress = h('progress', {
      className: failed ? 'progress progress-failed' : 'progress',
      attrs: { max: '100', 'aria-label': failed ? l10n.t('Progress: failed') : l10n.t('Progress') },
    });
    // The gateway reports a failed task at 100 %; a full bar would read as finished.
    if (failed) progress.value = 0;
    else if (t.progress !== undefined && t.phase !== 'submitting') progress.value = t.progress;
    else progress.removeAttribute('value');
    const download = t.download
      ? ` ${t.download.total ? l10n.t('{0} of {1}', formatBytes(t.download.received), formatBytes(t.download.total)) : formatBytes(t.download.received)}`
      : '';
    const actions: HTMLElement[] = [];
    if (t.file) {
      actions.push(
        act(l10n.t('Open'), 'open', l10n.t('Open the video')),
        act(l10n.t('System Player'), 'openExternal', l10n.t('Open with the system player')),
        act(l10n.t('Reveal'), 'reveal', l10n.t('Reveal in the explorer')),
      );
    }
    if (t.canCancel) actions.push(act(l10n.t('Cancel Polling'), 'cancel', l10n.t('Stop polling this task')));
    if (t.canResume) actions.push(act(l10n.t('Resume'), 'resume', l10n.t('Resume polling this task')));
    if (t.canRetryDownload)
      actions.push(act(l10n.t('Retry Download'), 'retryDownload', l10n.t('Fetch the link again and download')));
    if (t.canResubmit) actions.push(act(l10n.t('Resubmit'), 'resubmit', l10n.t('Submit again as a new task (billed)')));
    if (!running) actions.push(act(l10n.t('Forget'), 'forget', l10n.t('Remove from the list')));
    return h(
      'li',
      { className: `task task-${t.phase}`, dataset: { taskId: t.taskId ?? '', phase: t.phase } },
      h(
        'div',
        { className: 'task-head' },
        h('span', { className: 'task-prompt', text: clip(t.prompt, 120), attrs: { title: t.prompt } }),
        h('span', { className: `badge status-${t.phase}`, text: t.statusText }),
      ),
      h(
        'div',
        { className: 'meta' },
        `${t.model} · ${displaySizeText(t.size)} · ${l10n.t('video length {0}', formatDuration(t.duration * 1000))} · `,
        ...time,
        t.taskId ? ` · ${t.taskId}` : '',
        download,
      ),
      t.phase === 'succeeded' ? null : progress,
      // A failure is said once: the badge says "Failed", this paragraph gives the gateway's words.
      t.error && !t.statusText.endsWith(t.error.message)
        ? h('div', { className: 'error-message', text: t.error.message, attrs: { role: failed ? 'alert' : 'status' } })
        : null,
      t.billing ? h('p', { className: 'billing-note', text: t.billing }) : null,
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
    this.empty = h('p', {
      className: 'empty',
      text:
        kind === 'image'
          ? l10n.t('Generated images of this workspace appear here.')
          : l10n.t('Downloaded videos of this workspace appear here.'),
    });
    this.el = h(
      'section',
      { className: 'gallery-section' },
      h('h2', { className: 'section-title', text: l10n.t('Gallery') }),
      this.empty,
      this.grid,
    );
    this.keyed = new KeyedList(
      this.grid,
      this.empty,
      (i) => i.id,
      (i) => this.card(i),
    );
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
      : h('div', {
          className: `thumb thumb-${item.kind}`,
          text: item.exists ? (item.kind === 'video' ? '▶ MP4' : l10n.t('image')) : l10n.t('file missing'),
          attrs: { 'aria-hidden': 'true' },
        });
    const post = (action: ItemAction) => this.channel.post({ type: 'item', action, id: item.id });
    // Two buttons on the card (the first thing one does, and the rest); the rest in a menu.
    const actions = item.exists
      ? [
          act(l10n.t('Open'), 'open', l10n.t('Open')),
          moreMenu(
            l10n.t('More actions: {0}', item.label),
            [
              ...(item.kind === 'video'
                ? [{ label: l10n.t('Open with the System Player'), act: 'openExternal' as const }]
                : []),
              ...(item.kind === 'image'
                ? [{ label: l10n.t('Ask in Chat (attach to the next message)'), act: 'askInChat' as const }]
                : []),
              { label: l10n.t('Reveal in the Explorer'), act: 'reveal' },
              { label: l10n.t('Copy Path'), act: 'copyPath' },
              { label: l10n.t('Insert Markdown Link at the Cursor'), act: 'insertLink' },
              { label: l10n.t('Remove from Gallery (file kept)'), act: 'remove' },
            ],
            post,
          ),
        ]
      : [act(l10n.t('Remove from Gallery'), 'remove', l10n.t('Remove from the gallery (the file is already gone)'))];
    return h(
      'li',
      { className: `card${item.exists ? '' : ' card-missing'}`, dataset: { path: item.label } },
      thumb,
      h(
        'div',
        { className: 'card-body' },
        h('div', { className: 'card-prompt', text: clip(item.prompt, 160), attrs: { title: item.prompt } }),
        h(
          'div',
          { className: 'meta' },
          `${item.model} · `,
          h('span', { className: 'dimensions', text: dimensions(item) }),
          ` · ${formatWhen(item.createdAt)}`,
        ),
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
  if (item.pixels === null)
    return item.exists ? l10n.t('size unknown') : l10n.t('asked for {0}', displaySizeText(item.size));
  const real = displaySize(item.pixels);
  const asked = parseSize(item.size);
  return asked && (asked.width !== item.pixels.width || asked.height !== item.pixels.height)
    ? l10n.t('{0} (asked for {1})', real, displaySize(asked))
    : real;
}

/**
 * A "⋯" button that opens a menu of actions under it: a real button (Enter, Space) with
 * aria-expanded; arrow keys move between the items, Escape or a choice closes it and focus goes
 * back to the button.
 */
function moreMenu<A extends string>(
  label: string,
  items: { label: string; act: A }[],
  run: (act: A) => void,
): HTMLElement {
  const toggle = button('⋯', { className: 'btn-small more-toggle', ariaLabel: label, act: 'more' });
  toggle.setAttribute('aria-haspopup', 'menu');
  toggle.setAttribute('aria-expanded', 'false');
  const menu = h('div', { className: 'more-menu', attrs: { role: 'menu', 'aria-label': label } });
  menu.hidden = true;
  const entries = items.map((it) => {
    const b = h('button', {
      text: it.label,
      attrs: { type: 'button', role: 'menuitem', tabindex: '-1' },
      dataset: { act: it.act },
    });
    b.addEventListener('click', () => {
      close(true);
      run(it.act);
    });
    return b;
  });
  menu.append(...entries);
  const close = (refocus: boolean) => {
    menu.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
    if (refocus) toggle.focus();
  };
  toggle.addEventListener('click', () => {
    const open = menu.hidden;
    menu.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
    if (open) entries[0]?.focus();
  });
  menu.addEventListener('keydown', (e) => {
    const at = entries.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === 'Escape') close(true);
    else if (e.key === 'ArrowDown') entries[(at + 1) % entries.length]?.focus();
    else if (e.key === 'ArrowUp') entries[(at - 1 + entries.length) % entries.length]?.focus();
    else if (e.key === 'Tab') return close(false);
    else return;
    e.preventDefault();
  });
  // A click elsewhere closes it, as a menu does.
  menu.addEventListener('focusout', (e) => {
    if (!menu.contains(e.relatedTarget as Node | null) && e.relatedTarget !== toggle) close(false);
  });
  return h('div', { className: 'more' }, toggle, menu);
}
