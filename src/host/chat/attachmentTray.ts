import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { imageSupport } from '../../core/chat/capabilities';
import type { ConversationStore } from '../../core/chat/conversationStore';
import { MAX_IMAGES_PER_MESSAGE } from '../../core/chat/images';
import { GatewayError, isGatewayError } from '../../core/errors';
import type { ModelInfo } from '../../core/models/types';
import { formatNumber } from '../../shared/format';
import type { ImageRef, ModelChangeReason } from '../../shared/protocol';
import type { Services } from '../services';
import { contextFromEditor, imageAttachment, imageLabel, readImageFile, type PendingAttachment } from './attachments';
import { chatSettings } from './chatSettings';
import type { ImageReadPolicy } from './imageAccess';
import type { ModelChoice } from './modelChoice';
import type { Shown } from './sessions';

/** What "Ask about this image" did when it only attached (no prompt given). */
export interface AttachImagesResult {
  attached: ImageRef[];
  /** The model the images will go to (it may have been switched to one that takes images). */
  model: string;
  /** Set when the model was switched because the previous one does not take images. */
  switchedFrom?: string;
  /** Why some of the given files were not attached (the others were). */
  refused?: string[];
}

/** What the tray needs from the chat controller. */
export interface TrayHost {
  readonly store: ConversationStore;
  readonly services: Services;
  readonly imagePolicy: ImageReadPolicy;
  readonly models: Pick<ModelChoice, 'modelFor' | 'goneModel' | 'keyChanged'>;
  chatModels(): ModelInfo[];
  selectModel(id: string, target: Shown, switched?: { from: string; reason: ModelChangeReason }): Promise<void>;
  sendSnapshot(): Promise<void>;
  ensureLoaded(): Promise<void>;
}

/**
 * Context and images waiting to go with the next message, each conversation's in its own `tray`:
 * editor files and selections, parsed documents, and images picked, pasted, dropped or given by a
 * command. A scripted question brings its own images and takes none of these.
 */
export class AttachmentTray {
  constructor(private readonly host: TrayHost) {}

  /** What waits to go with the next message of that conversation. */
  itemsFor(target: Shown): PendingAttachment[] {
    return [...(target.tray ?? [])];
  }

  /** These went with a message (they were stored with its question): they wait no more. */
  drop(target: Shown, sent: readonly PendingAttachment[]): void {
    const ids = new Set(sent.map((a) => a.id));
    this.set(
      target,
      this.itemsFor(target).filter((a) => !ids.has(a.id)),
    );
  }

  remove(target: Shown, id: string): void {
    this.set(
      target,
      this.itemsFor(target).filter((a) => a.id !== id),
    );
  }

  private set(target: Shown, items: PendingAttachment[]): void {
    if (items.length) target.tray = items;
    else delete target.tray;
  }

  private list(target: Shown): PendingAttachment[] {
    return (target.tray ??= []);
  }

  /**
   * Attaches image files to the next message. With `switchModel`, a selected model that does not
   * take images (or a conversation whose own model the key can no longer use) moves to the first
   * chat model that takes images; the conversation records the switch and the caller is told.
   */
  async attachImages(
    uris: vscode.Uri[],
    options: { switchModel?: boolean; into?: PendingAttachment[] },
    target: Shown,
  ): Promise<AttachImagesResult> {
    await this.host.ensureLoaded();
    if (!uris.length) throw new GatewayError('badRequest', vscode.l10n.t('No image was given.'));
    const settings = chatSettings();
    let model = this.host.models.modelFor(target.meta);
    const from = model?.id ?? this.host.models.goneModel(target.meta);
    let switchedFrom: string | undefined;
    if (options.switchModel && from && (!model || !imageSupport(model, settings.imageInputModels).supported)) {
      const capable = this.host.chatModels().find((m) => imageSupport(m, settings.imageInputModels).supported);
      if (!capable) {
        const reason = model
          ? imageSupport(model, settings.imageInputModels).reason
          : vscode.l10n.t('{0} is not available with this API key.', from);
        throw new GatewayError(
          'modelUnavailable',
          vscode.l10n.t('None of the chat models this key may use takes images, by the model catalog. {0}', reason),
        );
      }
      switchedFrom = from;
      await this.host.selectModel(capable.id, target, {
        from,
        reason: model ? 'imageNeedsVision' : this.host.models.keyChanged ? 'keyChanged' : 'modelGone',
      });
      // The conversation says it too (a notice); this reaches a user whose chat view is hidden.
      const why = model
        ? vscode.l10n.t('Chat model switched to {0}: {1} does not take images.', capable.id, from)
        : vscode.l10n.t('Chat model switched to {0}: {1} is not available with this API key.', capable.id, from);
      void vscode.window.setStatusBarMessage(why, 5000);
      model = capable;
    }
    const attached: ImageRef[] = [];
    const refused: GatewayError[] = [];
    for (const uri of uris) {
      try {
        const a = await this.addImage(options.into ?? this.list(target), async () => {
          const file = await readImageFile(uri, settings.imageMaxBytes);
          return imageAttachment(this.host.store.images, file.bytes, file.name, settings.imageMaxBytes);
        });
        if (a.image) attached.push(a.image);
      } catch (err) {
        refused.push(isGatewayError(err) ? err : new GatewayError('badRequest', String(err), { cause: err }));
      }
    }
    await this.host.sendSnapshot();
    // One bad file among several is reported and the rest stay attached; nothing attached is an error.
    const first = refused[0];
    if (first && !attached.length) throw first;
    for (const err of refused) void vscode.window.showWarningMessage(err.message);
    return {
      attached,
      model: model?.id ?? '',
      ...(switchedFrom ? { switchedFrom } : {}),
      ...(refused.length ? { refused: refused.map((e) => e.message) } : {}),
    };
  }

  async attachFromEditor(target: Shown, what: 'file' | 'selection'): Promise<void> {
    const attachment = contextFromEditor(what, chatSettings().contextMaxChars);
    if (!attachment) {
      void vscode.window.showInformationMessage(
        what === 'file'
          ? vscode.l10n.t('Open a file in the editor to attach it.')
          : vscode.l10n.t('Select some text in the editor to attach it.'),
      );
      return;
    }
    this.list(target).push(attachment);
    if (attachment.truncated)
      void vscode.window.showWarningMessage(
        vscode.l10n.t(
          '{0} was cut to {1} characters (setting "modelGateway.chat.contextMaxChars").',
          attachment.label,
          formatNumber(attachment.chars),
        ),
      );
    await this.host.sendSnapshot();
  }

  /** "Image…" in the view: the open dialog, filtered to the formats the protocols take. */
  async pickImages(target: Shown): Promise<void> {
    const model = this.host.models.modelFor(target.meta);
    const support = model ? imageSupport(model, chatSettings().imageInputModels) : undefined;
    if (model && !support?.supported) {
      void vscode.window.showWarningMessage(support?.reason ?? vscode.l10n.t('{0} does not take images.', model.id));
      return;
    }
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: true,
      openLabel: vscode.l10n.t('Attach'),
      title: vscode.l10n.t('Attach images to the next chat message'),
      filters: { [vscode.l10n.t('Images')]: ['png', 'jpg', 'jpeg', 'gif', 'webp'] },
    });
    if (!picked?.length) return;
    await this.host.imagePolicy.rememberPicked(picked);
    await this.attachImagesQuietly(target, picked);
  }

  /** Pasted or dropped image bytes from the view. */
  async attachImageData(target: Shown, name: string, base64: string): Promise<void> {
    const bytes = Buffer.from(base64, 'base64');
    await this.whenImagesAllowed(target, async () => {
      const max = chatSettings().imageMaxBytes;
      await this.addImage(this.list(target), () =>
        imageAttachment(this.host.store.images, bytes, name || vscode.l10n.t('pasted image'), max),
      );
    });
    await this.host.sendSnapshot();
  }

  /**
   * Files dropped on the view from the explorer (or the OS) as URIs: read only when inside a
   * workspace folder, the extension's storage, or picked in a dialog this session (imageAccess.ts).
   */
  async attachImageUris(target: Shown, uris: string[]): Promise<void> {
    const allowed: vscode.Uri[] = [];
    for (const raw of uris) {
      let uri: vscode.Uri;
      try {
        uri = vscode.Uri.parse(raw, true);
      } catch {
        this.host.services.log.warn(`Ignored a dropped item that is not a URI: ${raw.slice(0, 200)}`);
        continue;
      }
      const refusal = await this.host.imagePolicy.refusal(uri);
      if (refusal) {
        this.host.services.log.warn(
          `Refused to read ${uri.toString(true).slice(0, 300)} for the chat view: outside the workspace and not picked by the user.`,
        );
        void vscode.window.showWarningMessage(refusal);
      } else allowed.push(uri);
    }
    if (allowed.length) await this.attachImagesQuietly(target, allowed);
  }

  /** Attaches from the view: each problem is shown, the images that are fine still attach. */
  private async attachImagesQuietly(target: Shown, uris: vscode.Uri[]): Promise<void> {
    await this.whenImagesAllowed(target, async () => {
      const max = chatSettings().imageMaxBytes;
      for (const uri of uris) {
        try {
          await this.addImage(this.list(target), async () => {
            const file = await readImageFile(uri, max);
            return imageAttachment(this.host.store.images, file.bytes, file.name, max);
          });
        } catch (err) {
          void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
        }
      }
    });
    await this.host.sendSnapshot();
  }

  private async whenImagesAllowed(target: Shown, work: () => Promise<void>): Promise<void> {
    await this.host.ensureLoaded();
    const model = this.host.models.modelFor(target.meta);
    const support = model ? imageSupport(model, chatSettings().imageInputModels) : undefined;
    if (model && !support?.supported) {
      void vscode.window.showWarningMessage(support?.reason ?? vscode.l10n.t('{0} does not take images.', model.id));
      return;
    }
    try {
      await work();
    } catch (err) {
      void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
    }
  }

  /** Adds one image attachment to `items` (the same image twice is attached once). */
  private async addImage(
    items: PendingAttachment[],
    make: () => Promise<PendingAttachment>,
  ): Promise<PendingAttachment> {
    const count = items.filter((a) => a.image).length;
    if (count >= MAX_IMAGES_PER_MESSAGE)
      throw new GatewayError(
        'badRequest',
        vscode.l10n.t('A message can carry at most {0} images.', formatNumber(MAX_IMAGES_PER_MESSAGE)),
      );
    const attachment = await make();
    const same = items.find((a) => a.image && a.image.id === attachment.image?.id);
    if (same) return same;
    items.push(attachment);
    if (attachment.image)
      this.host.services.log.info(`Attached image ${imageLabel(attachment.image)} to the next chat message.`);
    return attachment;
  }

  /** Adds text produced elsewhere (e.g. a parsed document) as context for the next message. */
  async addContext(target: Shown, label: string, text: string): Promise<void> {
    const max = chatSettings().contextMaxChars;
    this.list(target).push({
      id: randomUUID(),
      label,
      text: text.slice(0, max),
      chars: Math.min(text.length, max),
      truncated: text.length > max,
    });
    await this.host.sendSnapshot();
  }
}
