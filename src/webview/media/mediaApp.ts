/**
 * Media Studio: an Images tab and a Video tab (a real tablist, arrow keys move between tabs), a
 * notice when the key or models are missing, and each tab's gallery. Every snapshot is applied
 * whole; the form fields the user is typing in are never overwritten by one.
 */
import * as l10n from '@vscode/l10n';
import type { MediaHostMessage, MediaSnapshot, MediaTab } from '../../shared/mediaProtocol';
import { aroundSlot, button, h, setHidden, setText, SLOT } from '../shared/dom';
import { NoticeBanner } from '../shared/notice';
import type { MediaChannel } from './channel';
import { ImagesTab } from './imagesTab';
import { GalleryGrid } from './lists';
import { VideoTab } from './videoTab';

export class MediaApp {
  private readonly images: ImagesTab;
  private readonly video: VideoTab;
  private readonly imageGallery: GalleryGrid;
  private readonly videoGallery: GalleryGrid;
  private readonly tabs: Record<MediaTab, { tab: HTMLButtonElement; panel: HTMLElement }>;
  private readonly notice: NoticeBanner;
  private readonly output = h('span', { className: 'output-folder' });
  private readonly loading = h('div', { className: 'loading', text: l10n.t('Loading…') });

  constructor(
    root: HTMLElement,
    private readonly channel: MediaChannel,
  ) {
    this.notice = new NoticeBanner((action) => channel.post({ type: 'action', action }));
    this.images = new ImagesTab(channel);
    this.video = new VideoTab(channel);
    this.imageGallery = new GalleryGrid(channel, 'image');
    this.videoGallery = new GalleryGrid(channel, 'video');
    const makeTab = (id: MediaTab, label: string, ...content: HTMLElement[]) => {
      const tab = h('button', {
        className: 'tab',
        text: label,
        attrs: { type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': `panel-${id}` },
      });
      const panel = h(
        'section',
        { className: 'tab-panel', attrs: { role: 'tabpanel', id: `panel-${id}`, 'aria-labelledby': `tab-${id}` } },
        ...content,
      );
      tab.addEventListener('click', () => this.select(id, true));
      return { tab, panel };
    };
    this.tabs = {
      images: makeTab('images', l10n.t('Images'), this.images.el, this.imageGallery.el),
      video: makeTab('video', l10n.t('Video'), this.video.el, this.videoGallery.el),
    };
    const openFolder = button(l10n.t('Open Folder'), {
      className: 'btn-link',
      ariaLabel: l10n.t('Show the output folder'),
    });
    openFolder.addEventListener('click', () => channel.post({ type: 'action', action: 'openOutputFolder' }));
    const tablist = h(
      'div',
      { className: 'tabs', attrs: { role: 'tablist', 'aria-label': l10n.t('Media Studio') } },
      this.tabs.images.tab,
      this.tabs.video.tab,
    );
    tablist.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft' && e.key !== 'Home' && e.key !== 'End') return;
      e.preventDefault();
      const order: MediaTab[] = ['images', 'video'];
      const current = order.indexOf(this.channel.state.tab);
      const next =
        e.key === 'Home'
          ? 0
          : e.key === 'End'
            ? order.length - 1
            : (current + (e.key === 'ArrowRight' ? 1 : order.length - 1)) % order.length;
      this.select(order[next] ?? 'images', true);
      this.tabs[order[next] ?? 'images'].tab.focus();
    });
    const header = h(
      'header',
      { className: 'studio-header' },
      h('h1', { className: 'title', text: l10n.t('Media Studio') }),
      tablist,
      h('span', { className: 'spacer' }),
      h('span', { className: 'output' }, ...aroundSlot(l10n.t('Saved to {0}', SLOT), this.output), ' ', openFolder),
    );
    const body = h(
      'main',
      { className: 'studio-body' },
      this.notice.el,
      this.loading,
      this.tabs.images.panel,
      this.tabs.video.panel,
    );
    body.hidden = false;
    this.tabs.images.panel.hidden = true;
    this.tabs.video.panel.hidden = true;
    root.replaceChildren(header, body);
    setInterval(() => {
      const now = Date.now();
      this.images.tick(now);
      this.video.tick(now);
    }, 1000);
  }

  receive(message: MediaHostMessage): void {
    switch (message.type) {
      case 'snapshot':
        this.apply(message.state);
        return;
      case 'showTab':
        this.select(message.tab, true);
        return;
    }
  }

  private apply(s: MediaSnapshot): void {
    const first = this.loading.isConnected;
    this.loading.remove();
    this.images.update(s);
    this.video.update(s);
    this.imageGallery.update(s.gallery);
    this.videoGallery.update(s.gallery);
    setText(this.output, s.outputFolder);
    this.notice.update(s.notice);
    if (first) this.select(this.channel.state.tab, false);
  }

  private select(tab: MediaTab, focusForm: boolean): void {
    for (const [id, t] of Object.entries(this.tabs) as Array<
      [MediaTab, { tab: HTMLButtonElement; panel: HTMLElement }]
    >) {
      const on = id === tab;
      t.tab.setAttribute('aria-selected', String(on));
      t.tab.tabIndex = on ? 0 : -1;
      t.tab.classList.toggle('tab-active', on);
      setHidden(t.panel, !on || this.loading.isConnected);
    }
    if (this.channel.state.tab !== tab) {
      this.channel.state.tab = tab;
      this.channel.saveSoon();
    }
    if (focusForm && !this.loading.isConnected && document.activeElement === document.body)
      (tab === 'images' ? this.images : this.video).focus();
  }
}
