/**
 * Entry of the Media Studio webview (bundled to dist/webview/media.js, loaded with a CSP nonce).
 * Every host message is validated against the shared protocol; anything else is logged and dropped.
 */
import { mediaHostMessageSchema } from '../../shared/mediaProtocol';
import { MediaApp } from './mediaApp';
import { MediaChannel } from './channel';

const channel = new MediaChannel();
const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
const app = new MediaApp(root, channel);

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const parsed = mediaHostMessageSchema.safeParse(event.data);
  if (!parsed.success) {
    console.warn('[Model Gateway media] ignored a host message that does not fit the protocol:', parsed.error.issues, event.data);
    return;
  }
  app.receive(parsed.data);
});

channel.post({ type: 'ready' });
