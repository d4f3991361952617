import * as vscode from 'vscode';
import { maskKey } from '../core/config';

const SECRET_ID = 'modelGateway.apiKey';

/**
 * The API key lives only in SecretStorage. This is the one place that reads or writes it; the
 * rest of the extension asks for it at the moment of a request and never stores or logs it.
 */
export class KeyStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly secrets: vscode.SecretStorage) {
    // Another window of the same profile may set or clear the key too.
    this.subscription = secrets.onDidChange((e) => {
      if (e.key === SECRET_ID) this.changed.fire();
    });
  }

  get(): Promise<string | undefined> {
    return Promise.resolve(this.secrets.get(SECRET_ID));
  }

  async has(): Promise<boolean> {
    return (await this.get()) !== undefined;
  }

  async masked(): Promise<string | undefined> {
    const key = await this.get();
    return key === undefined ? undefined : maskKey(key);
  }

  async set(key: string): Promise<void> {
    await this.secrets.store(SECRET_ID, key);
    this.changed.fire();
  }

  async clear(): Promise<void> {
    await this.secrets.delete(SECRET_ID);
    this.changed.fire();
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
