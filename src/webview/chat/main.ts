/** Entry of the chat webview (bundled to dist/webview/chat.js, loaded with a CSP nonce). */
import { hostMessageSchema } from '../../shared/protocol';
import { startWebviewApp } from '../shared/channel';
import { ChatApp } from './chatApp';
import { ChatChannel } from './chatChannel';

const channel = new ChatChannel();
startWebviewApp('chat', hostMessageSchema, (root) => new ChatApp(root, channel), () => channel.post({ type: 'ready' }));
