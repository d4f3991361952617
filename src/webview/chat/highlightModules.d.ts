// highlight.js ships types for its main entry and its languages, but not for `lib/core`.
declare module 'highlight.js/lib/core' {
  import type { HLJSApi } from 'highlight.js';
  const hljs: HLJSApi;
  export default hljs;
}

// `import source from './file?worker'`: the text of that file's own browser bundle, to start as a
// worker from a blob: URL (built by the `workerText` plugin of esbuild.js).
declare module '*?worker' {
  const source: string;
  export default source;
}
