import * as l10n from '@vscode/l10n';

/**
 * A catalog's modality ids (`text`, `image`, `pdf`…) in the display language, for sentences such
 * as "the model catalog lists only text input for it"; an id not known here is shown as it came.
 */
export function modalityName(id: string): string {
  switch (id.trim().toLowerCase()) {
    case 'text':
      return l10n.t('text');
    case 'image':
      return l10n.t('image');
    case 'audio':
      return l10n.t('audio');
    case 'video':
      return l10n.t('video');
    case 'pdf':
      return 'PDF';
    default:
      return id;
  }
}
