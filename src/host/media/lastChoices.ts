import type * as vscode from 'vscode';
import type { ImageRoute } from '../../shared/mediaProtocol';

/** The Media Studio's last choices (route, models, size…), per workspace, offered again next time. */
export interface LastChoices {
  route?: ImageRoute;
  imageModel?: string;
  outerModel?: string;
  videoModel?: string;
  imageSize?: string;
  imageCount?: number;
  stream?: boolean;
}

const LAST_KEY = 'media.last';

export class LastChoicesStore {
  constructor(private readonly state: vscode.Memento) {}

  get(): LastChoices {
    const raw = this.state.get<LastChoices>(LAST_KEY);
    return typeof raw === 'object' && raw !== null ? raw : {};
  }

  async remember(choices: LastChoices): Promise<void> {
    await this.state.update(LAST_KEY, { ...this.get(), ...choices });
  }
}
