import * as vscode from 'vscode';
import type { ProxySettings } from '../core/proxy';
import { readSettings, type SettingsRead } from '../core/settings';

export const SECTION = 'modelGateway';

export function readHostSettings(): SettingsRead {
  const config = vscode.workspace.getConfiguration(SECTION);
  return readSettings((key) => config.get(key));
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
