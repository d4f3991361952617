import * as vscode from 'vscode';
import type { ProxySettings } from '../core/proxy';
import { vscodeProxyLookup } from './systemProxy';
import { readSettings, type Settings, type SettingsRead } from '../core/settings';
import type { TrustSettings } from '../core/tls';
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

const PROXY_SUPPORT = ['off', 'on', 'fallback', 'override'] as const;

/**
 * VS Code's own proxy settings, which the extension honours unless `modelGateway.proxy` is `off`,
 * and, where they and the environment name no proxy, VS Code's resolution of the system proxy.
 */
export function readProxySettings(mode: ProxySettings['mode'], log: (line: string) => void): ProxySettings {
  const http = vscode.workspace.getConfiguration('http');
  const support = http.get<string>('proxySupport');
  const authorization = http.get<unknown>('proxyAuthorization');
  return {
    mode,
    // VS Code's default is `override`; an unknown value is treated like it.
    support: PROXY_SUPPORT.find((s) => s === support) ?? 'override',
    proxyUrl: http.get<string>('proxy') ?? '',
    authorization: typeof authorization === 'string' ? authorization : '',
    strictSSL: http.get<boolean>('proxyStrictSSL') ?? true,
    noProxy: http.get<string[]>('noProxy') ?? [],
    env: process.env,
    system: vscodeProxyLookup(vscode.env.appRoot, log),
  };
}

/** Which certificate authorities to trust: VS Code's `http.systemCertificates` and our user-only file setting. */
export function readTrustSettings(settings: Settings): TrustSettings {
  return {
    systemCertificates: vscode.workspace.getConfiguration('http').get<boolean>('systemCertificates') ?? true,
    extraCaFile: settings.extraCaCertificates,
    env: process.env,
  };
}

const HTTP_SETTINGS = [
  'http.proxy',
  'http.proxySupport',
  'http.proxyAuthorization',
  'http.proxyStrictSSL',
  'http.noProxy',
  'http.systemCertificates',
];

export function affectsGateway(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(SECTION) || HTTP_SETTINGS.some((s) => e.affectsConfiguration(s));
}
