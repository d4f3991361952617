/** Entry of the Media Studio webview (bundled to dist/webview/media.js, loaded with a CSP nonce). */
import { mediaHostMessageSchema } from '../../shared/mediaProtocol';
import { startWebviewApp } from '../shared/channel';
import { MediaChannel } from './channel';
import { MediaApp } from './mediaApp';

const channel = new MediaChannel();
startWebviewApp(
  'media',
  mediaHostMessageSchema,
  (root) => new MediaApp(root, channel),
  () => channel.post({ type: 'ready' }),
);
