// highlight.js ships types for its main entry and its languages, but not for `lib/core`.
declare module 'highlight.js/lib/core' {
  import type { HLJSApi } from 'highlight.js';
  const hljs: HLJSApi;
  export default hljs;
}
