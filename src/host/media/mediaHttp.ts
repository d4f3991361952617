import * as vscode from 'vscode';
import { Endpoints } from '../../core/config';
import { HttpClient } from '../../core/http';
import { longCallTimeouts } from '../../core/media/images';
import { timeoutsFrom } from '../../core/settings';
import type { Services } from '../services';
import { readProxySettings } from '../settings';

/**
 * The HTTP client for image generation: the same gateway, key, proxy and log as every other call,
 * but with the long limits (`timeouts.longRequestSeconds`) for the first byte and for silences in
 * a streamed answer, since an image can take minutes. Rebuilt when the settings change.
 */
export class MediaHttp implements vscode.Disposable {
  private client?: HttpClient;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly services: Services) {
    this.subscription = services.onDidChangeSettings(() => this.reset());
  }

  long(): HttpClient {
    if (!this.client) {
      const s = this.services.settings();
      this.client = new HttpClient({
        endpoints: new Endpoints(this.services.base().base),
        getKey: () => this.services.keys.get(),
        timeouts: longCallTimeouts(timeoutsFrom(s)),
        proxy: readProxySettings(s.proxy),
        userAgent: `model-gateway-vscode/${this.services.context.extension.packageJSON.version as string} vscode/${vscode.version}`,
        log: (line) => this.services.log.info(line),
      });
    }
    return this.client;
  }

  private reset(): void {
    void this.client?.close();
    this.client = undefined;
  }

  dispose(): void {
    this.subscription.dispose();
    this.reset();
  }
}
