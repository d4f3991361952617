import * as path from 'node:path';
import * as z from 'zod/mini';
import type { SystemProxyLookup } from '../core/proxy';

/**
 * VS Code's own proxy resolution for an address, as its extension host runs it. No stable `vscode`
 * API resolves a proxy, and VS Code patches only Node's http/https modules and the global fetch, not
 * an extension's own undici. But the extension host loads `@vscode/proxy-agent` from VS Code's
 * install and sets `resolveProxyURL` on that module (src/vs/workbench/api/node/proxyResolver.ts in
 * microsoft/vscode, from before 1.100 to 1.139 at least): `http.proxy`, the environment, and then,
 * in a local window or where `http.useLocalProxyConfiguration` allows, the operating system's proxy
 * settings and PAC script through Electron. GitHub Copilot Chat's network diagnostics read it the
 * same way (src/extension/log/vscode-node/loggingActions.ts in microsoft/vscode-copilot-chat, its
 * "Proxy URL" line): required from `vscode.env.appRoot`, where Node's module cache hands back the
 * extension host's own instance.
 *
 * Loaded on the first request that needs it, never at activation; the property is read on every
 * call, so whatever VS Code sets there is followed.
 */
export function vscodeProxyLookup(appRoot: string, log: (line: string) => void): SystemProxyLookup {
  let module: ProxyAgentModule | null | undefined;
  return async (url) => {
    // Looked for once: null (not found) is kept, so the log says it once.
    if (module === undefined) module = loadProxyAgent(appRoot, log);
    const resolve = module?.resolveProxyURL;
    if (typeof resolve !== 'function') return undefined;
    const raw: unknown = await resolve.call(module, url);
    const answer = ANSWER.safeParse(raw);
    if (!answer.success) throw new Error(`VS Code's proxy resolution did not answer with an address (${typeof raw})`);
    return answer.data || undefined;
  };
}

interface ProxyAgentModule {
  resolveProxyURL?: unknown;
}

/** `undefined` for a direct connection, else a proxy URL such as `http://proxy:8080`. */
const ANSWER = z.optional(z.string());

function loadProxyAgent(appRoot: string, log: (line: string) => void): ProxyAgentModule | null {
  // Desktop builds that pack node_modules into an archive keep it in node_modules.asar.
  for (const folder of ['node_modules.asar', 'node_modules']) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- VS Code's own copy, loaded where it lives (see above)
      const loaded = require(path.join(appRoot, folder, '@vscode', 'proxy-agent')) as ProxyAgentModule;
      if (typeof loaded.resolveProxyURL === 'function') return loaded;
    } catch {
      // Not in this folder.
    }
  }
  log("VS Code's proxy resolution was not found: the system proxy settings and PAC scripts are not followed");
  return null;
}
