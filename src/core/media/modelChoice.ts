import * as l10n from '@vscode/l10n';
import { GatewayError } from '../errors';
import type { ModelInfo, ModelKind } from '../models/types';
import { words } from '../../shared/words';

/** "a video model", "an image model": the kind of model a message asks for. */
const kindModel = (kind: ModelKind): string =>
  ({
    chat: l10n.t('language (chat) model'),
    image: l10n.t('image model'),
    video: l10n.t('video model'),
    tool: l10n.t('tool model'),
    other: l10n.t('embedding or rerank model'),
  })[kind];

/**
 * The model exactly as the key's list names it. The gateway refuses an abbreviated id, so a near miss is refused here, before anything is sent or billed,
 * with the closest real ids as suggestions.
 */
export function requireListedModel(id: string, models: readonly ModelInfo[], kind: ModelKind): ModelInfo {
  const wanted = id.trim();
  if (!wanted) throw new GatewayError('badRequest', words('Choose a {0}.', kindModel(kind)));
  const exact = models.find((m) => m.id === wanted);
  if (exact) {
    if (!exact.available) {
      throw new GatewayError(
        'modelUnavailable',
        words(
          "The model {0} is in the catalog but not available to this key. An administrator must confirm the grant for the key's group; until then pick another {1}.",
          exact.id,
          kindModel(kind),
        ),
      );
    }
    if (exact.kind !== kind) {
      throw new GatewayError(
        'badRequest',
        words(
          '{0} is a {1}, not a {2}.{3}',
          exact.id,
          kindModel(exact.kind),
          kindModel(kind),
          suggestionText(wanted, models, kind),
        ),
      );
    }
    return exact;
  }
  const caseOnly = models.find((m) => m.id.toLowerCase() === wanted.toLowerCase());
  const hint = caseOnly
    ? l10n.t(' Model ids are case-sensitive: did you mean {0}?', caseOnly.id)
    : suggestionText(wanted, models, kind);
  throw new GatewayError(
    'badRequest',
    words(
      '"{0}" is not a model id listed for this key. The gateway accepts only the exact id as listed, never an abbreviated form.{1}',
      wanted,
      hint || l10n.t(' No {0} is available to this key; refresh the models or check the key.', kindModel(kind)),
    ),
  );
}

/**
 * The outer model of a Responses request with the image tool must be a language model that speaks
 * the Responses protocol; the image model goes in the `image_generation` tool.
 */
export function requireOuterModel(id: string, models: readonly ModelInfo[]): ModelInfo {
  const exact = models.find((m) => m.id === id.trim());
  if (exact && exact.kind === 'image') {
    throw new GatewayError(
      'badRequest',
      words(
        '{0} is an image model and cannot be the outer model of a Responses request: the outer model must be a language model, and the image model goes in the image_generation tool ({1}). Choose a chat model as the outer model.{2}',
        exact.id,
        `tools: [{type: image_generation, action: generate, model: ${exact.id}}]`,
        suggestionText('', models, 'chat', responsesCapable),
      ),
    );
  }
  const model = requireListedModel(id, models, 'chat');
  if (!responsesCapable(model)) {
    const capable = models.filter(
      (m) => m.kind === 'chat' && m.available && responsesCapable(m) && m.protocolSource !== 'fallback',
    );
    throw new GatewayError(
      'badRequest',
      words(
        '{0} does not speak the Responses protocol (it speaks {1}), so it cannot carry the image tool.{2}',
        model.id,
        model.protocols.join(', ') || l10n.t('no known protocol'),
        capable.length
          ? l10n.t(
              ' Models that do: {0}.',
              capable
                .slice(0, 5)
                .map((m) => m.id)
                .join(', '),
            )
          : '',
      ),
    );
  }
  return model;
}

/** Protocol lists that came from a guess do not rule a model out; the gateway then decides. */
function responsesCapable(m: ModelInfo): boolean {
  return m.protocols.includes('responses') || m.protocolSource === 'fallback';
}

function suggestionText(
  wanted: string,
  models: readonly ModelInfo[],
  kind: ModelKind,
  filter: (m: ModelInfo) => boolean = () => true,
): string {
  const found = suggestModels(
    wanted,
    models.filter((m) => m.kind === kind && m.available && filter(m)),
  );
  return found.length ? l10n.t(' Did you mean {0}?', found.map((m) => m.id).join(', ')) : '';
}

/** Up to three ids closest to `wanted`: containing it, sharing its start, or within a small edit distance. */
export function suggestModels(wanted: string, candidates: readonly ModelInfo[]): ModelInfo[] {
  const w = wanted.toLowerCase();
  if (!w) return candidates.slice(0, 3);
  const scored = candidates.map((m) => {
    const id = m.id.toLowerCase();
    let score = editDistance(w, id);
    if (id.includes(w) || w.includes(id)) score -= 100;
    else if (id.startsWith(w.slice(0, Math.min(4, w.length)))) score -= 50;
    return { m, score };
  });
  const limit = Math.max(3, Math.ceil(w.length / 2));
  return scored
    .filter((s) => s.score < limit)
    .sort((a, b) => a.score - b.score || a.m.id.localeCompare(b.m.id))
    .slice(0, 3)
    .map((s) => s.m);
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] as number;
}
