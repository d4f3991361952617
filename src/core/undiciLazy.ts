type UndiciModules = typeof import('./undiciParts');

let undici: UndiciModules | undefined;

/** undici, required on first use and not before (see undiciParts.ts): activation never reads it. */
export function loadUndici(): UndiciModules {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose: keeps undici off the activation path
  undici ??= require('./undiciParts') as UndiciModules;
  return undici;
}
