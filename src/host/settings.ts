import * as vscode from 'vscode';
import type { ProxySettings } from '../core/proxy';
import { readSettings, type SettingsRead } from '../core/settings';
import { USER_ONLY_KEYS, type UserOnlyKey } from '../core/userOnlySettings';

export const SECTION = 'modelGateway';

/**
 * The settings in force. User-only settings (where the key goes, where files are written) take
 * the user's value alone, even if VS Code's scope filtering were ever bypassed: a workspace or
 * folder value of them is never used (host/trust/workspaceOverrides.ts tells the user about it).
 */
export function readHostSettings(): SettingsRead {
  const config = vscode.workspace.getConfiguration(SECTION);
  return readSettings((key) => (isUserOnly(key) ? config.inspect(key)?.globalValue : config.get(key)));
}

function isUserOnly(key: string): key is UserOnlyKey {
  return (USER_ONLY_KEYS as readonly string[]).includes(key);
}

/** VS Code's own proxy settings, which the extension honours unless `modelGateway.proxy` is `off`. */
export function readProxySettings(mode: ProxySettings['mode']): ProxySettings {
  const http = vscode.workspace.getConfiguration('http');
  return {
    mode,
    proxyUrl: http.get<string>('proxy') ?? '',
    strictSSL: http.get<boolean>('proxyStrictSSL') ?? true,
    noProxy: http.get<string[]>('noProxy') ?? [],
    env: process.env,
  };
}

export function affectsGateway(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(SECTION) || e.affectsConfiguration('http.proxy') || e.affectsConfiguration('http.proxyStrictSSL') || e.affectsConfiguration('http.noProxy');
}
