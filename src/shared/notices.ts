/**
 * The words of a conversation's notices (a model change the user did not make there), made when
 * shown so that they follow the language of the view; the stored form holds only ids and a
 * reason. Used by the chat view and by the Markdown export.
 */
import * as l10n from '@vscode/l10n';
import type { MessageNotice } from './protocol';

export function noticeText(notice: MessageNotice): string {
  const { from, to } = notice;
  if (!from) return l10n.t('The conversation continues with {0}.', to);
  switch (notice.reason) {
    case 'imageNeedsVision':
      return l10n.t('Model switched from {0} to {1}: {0} does not take images.', from, to);
    case 'keyChanged':
      return l10n.t('{0} is not available with the new API key; continuing with {1}.', from, to);
    case 'modelGone':
      return l10n.t('{0} is no longer available with this API key; continuing with {1}.', from, to);
    default:
      return l10n.t('Model switched from {0} to {1}.', from, to);
  }
}

/** What the conversation says while its model cannot be used, before the user picks another. */
export function modelGoneText(model: string, keyChanged: boolean): string {
  return keyChanged
    ? l10n.t('{0} is not available with the new API key.', model)
    : l10n.t('{0} is no longer available with this API key.', model);
}

/** Why Send waits, next to it. */
export function modelGoneSendNote(model: string): string {
  return l10n.t('Pick the model to continue with: {0} is not available with this API key.', model);
}
