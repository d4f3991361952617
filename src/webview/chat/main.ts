/**
 * Entry of the chat webview (bundled to dist/webview/chat.js, loaded with a CSP nonce).
 * Every host message is validated against the shared protocol; anything else is logged and dropped.
 */
import { hostMessageSchema } from '../../shared/protocol';
import { ChatApp } from './chatApp';
import { HostChannel } from './vscodeApi';

const channel = new HostChannel();
const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
const app = new ChatApp(root, channel);

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const parsed = hostMessageSchema.safeParse(event.data);
  if (!parsed.success) {
    console.warn('[Model Gateway chat] ignored a host message that does not fit the protocol:', parsed.error.issues, event.data);
    return;
  }
  app.receive(parsed.data);
});

channel.post({ type: 'ready' });
