/** Entry of the chat webview (bundled to dist/webview/chat.js, loaded with a CSP nonce). */
import { startWebviewApp } from '../shared/channel';
import { ChatApp } from './chatApp';
import { ChatChannel } from './chatChannel';
import { hostMessageReader } from './hostMessageReader';

const channel = new ChatChannel();
let app: ChatApp | undefined;
startWebviewApp(
  'chat',
  hostMessageReader((id) => app?.held(id)),
  (root) => (app = new ChatApp(root, channel)),
  () => channel.post({ type: 'ready' }),
);
