import type { Dispatcher } from 'undici';

/**
 * The parts of undici the HTTP client uses, and nothing else of it. undici costs ~110 ms to load
 * whole; these files are what is used. The production build puts this module in a file of its own
 * (dist/undici.js, see esbuild.js) that http.ts requires on the first request, so activation never
 * reads its ~310 KiB (`npm run bench` reports what activation loads).
 *
 * undici's index.js mixes its API (request, connect, …) into Dispatcher.prototype; ProxyAgent relies
 * on `connect` being there, so the same mix-in is done here. test/unit/undiciParts.test.ts fails when
 * an undici upgrade moves these files or changes that mix-in. What lets these imports go: docs/undici.md.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- deep requires of undici's own files, see above */
const DispatcherBase: { prototype: object } = require('undici/lib/dispatcher/dispatcher.js');
Object.assign(DispatcherBase.prototype, require('undici/lib/api/index.js'));

export const Agent: new (opts: object) => Dispatcher = require('undici/lib/dispatcher/agent.js');
export const ProxyAgent: new (opts: object) => Dispatcher = require('undici/lib/dispatcher/proxy-agent.js');
/* eslint-enable @typescript-eslint/no-require-imports */
