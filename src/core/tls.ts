import * as l10n from '@vscode/l10n';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as nodeTls from 'node:tls';
import { GatewayError } from './errors';
import { words } from '../shared/words';

/**
 * Which certificate authorities a connection to the gateway trusts.
 *
 * Node's default store (its bundled Mozilla roots plus `NODE_EXTRA_CA_CERTS`, read by Node at
 * start-up) is used as it is unless something must be added to it; giving undici an explicit `ca`
 * replaces that whole store, so the list built here starts from the same roots again and reads
 * `NODE_EXTRA_CA_CERTS` itself (Node drops it once `ca` is set).
 *
 * `http.systemCertificates` (VS Code's, on by default): VS Code honours it by patching Node's
 * `https` module in the extension host, and that patch only reaches requests made through
 * `https.request`; undici opens its own TLS sockets and never sees it. The operating system's
 * store can be read by Node itself only from Node 22.15 on (`tls.getCACertificates('system')`),
 * which is what VS Code 1.101 and later run extensions on; there it is added. On Node 20 (VS Code
 * 1.100) there is no such API and reading each platform's store by hand (Keychain, the Windows
 * store) needs native code, so the setting cannot be honoured there: `modelGateway.extraCaCertificates`
 * or `NODE_EXTRA_CA_CERTS` are the ways to trust a corporate authority, and the log says so.
 * See https://nodejs.org/api/tls.html#tlsgetcacertificatestype.
 */
export interface TrustSettings {
  /** VS Code's `http.systemCertificates`. */
  systemCertificates: boolean;
  /** `modelGateway.extraCaCertificates`: a PEM file with one or more certificates, '' when not set. */
  extraCaFile: string;
  env: Readonly<Record<string, string | undefined>>;
}

export const EXTRA_CA_SETTING = 'modelGateway.extraCaCertificates';

/** Node's certificate lists, where this Node has them (22.15+); a seam for tests. */
export interface CaSource {
  getCACertificates?: (type: 'default' | 'system') => string[];
  rootCertificates: readonly string[];
}

export interface Trust {
  /**
   * The complete list to trust and one TLS context built from it, or undefined to keep Node's
   * default store. Building a context from ~150 roots takes tens of milliseconds, so it is built
   * once and shared by every connection instead of once per connection from `ca`.
   */
  tls?: { ca: string[]; secureContext: nodeTls.SecureContext };
  /** Lines for the log: where the extra authorities came from, or why the system store was not read. */
  notes: string[];
}

/**
 * Builds the trust list once per client. A file named in our own setting that cannot be read or
 * holds no certificate is an error naming the setting, since requests would otherwise fail with a
 * less clear certificate error; an unreadable `NODE_EXTRA_CA_CERTS` file is only noted, as Node
 * itself only warns about it.
 */
export function loadTrust(settings: TrustSettings, source: CaSource = nodeTls as CaSource): Trust {
  const notes: string[] = [];
  const added: string[] = [];
  const getCa = source.getCACertificates;
  if (settings.systemCertificates) {
    if (getCa) {
      try {
        const system = getCa('system');
        added.push(...system);
        notes.push(
          `trusting ${system.length} certificate(s) from the operating system's store (http.systemCertificates)`,
        );
      } catch (err) {
        notes.push(
          `http.systemCertificates: the operating system's store could not be read: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    } else {
      notes.push(
        `http.systemCertificates: this VS Code's Node (${process.versions.node}) cannot read the operating system's ` +
          `certificate store; use "${EXTRA_CA_SETTING}" or NODE_EXTRA_CA_CERTS to trust a corporate certificate authority`,
      );
    }
  }
  const envFile = settings.env.NODE_EXTRA_CA_CERTS?.trim();
  if (envFile) {
    try {
      const certs = certificatesIn(readFileSync(envFile, 'utf8'));
      added.push(...certs);
      notes.push(`trusting ${certs.length} certificate(s) from NODE_EXTRA_CA_CERTS`);
    } catch (err) {
      notes.push(`NODE_EXTRA_CA_CERTS (${envFile}) was not used: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (settings.extraCaFile.trim()) {
    const certs = readExtraCaFile(settings.extraCaFile.trim());
    added.push(...certs);
    notes.push(`trusting ${certs.length} certificate(s) from ${EXTRA_CA_SETTING}`);
  }
  if (!added.length) return { notes };
  const base = getCa ? getCa('default') : [...source.rootCertificates];
  const ca = [...base, ...added];
  return { tls: { ca, secureContext: nodeTls.createSecureContext({ ca }) }, notes };
}

function readExtraCaFile(raw: string): string[] {
  const file = raw === '~' || raw.startsWith('~/') ? join(homedir(), raw.slice(1)) : raw;
  if (!isAbsolute(file)) {
    throw new GatewayError(
      'badRequest',
      words('"{0}" must be the absolute path of a PEM file; "{1}" is not.', EXTRA_CA_SETTING, raw),
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code ?? String(err);
    throw new GatewayError(
      'badRequest',
      words('The certificate file named in "{0}" could not be read ({1}): {2}', EXTRA_CA_SETTING, code, file),
      { cause: err },
    );
  }
  try {
    return certificatesIn(text);
  } catch (err) {
    throw new GatewayError(
      'badRequest',
      words(
        'The file named in "{0}" ({1}) is not usable: {2}',
        EXTRA_CA_SETTING,
        file,
        err instanceof Error ? err.message : String(err),
      ),
      { cause: err },
    );
  }
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The PEM certificates in a file, each checked to be a certificate; throws for a file with none or a damaged one. */
export function certificatesIn(text: string): string[] {
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (!blocks.length)
    throw new Error(
      l10n.t('it holds no PEM certificate ("-----BEGIN CERTIFICATE-----"); a DER file must be converted to PEM first'),
    );
  blocks.forEach((pem, n) => {
    try {
      new X509Certificate(pem);
    } catch {
      throw new Error(l10n.t('certificate {0} of {1} is damaged', n + 1, blocks.length));
    }
  });
  return blocks;
}

/** OpenSSL's verification results that mean "signed by an authority this computer does not trust". */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);
const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/;

/**
 * A refused certificate as a GatewayError that says what to do, or undefined when `err` is not a
 * certificate failure. `proxied`: the connection went through a proxy, the usual place for a
 * corporate authority that re-signs traffic, and the only case `http.proxyStrictSSL` touches.
 */
export function certificateError(err: unknown, host: string, proxied: boolean): GatewayError | undefined {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  const code = e?.code ?? e?.cause?.code ?? '';
  if (!TLS_CODES.test(code)) return undefined;
  if (UNTRUSTED.has(code)) {
    const message = proxied
      ? words(
          'The TLS certificate of {0} is signed by an authority this computer does not trust ({1}). If your network (or its proxy) uses its own certificate authority, put its certificate (PEM) in a file and set "{2}" to that file in your user settings, or start VS Code with NODE_EXTRA_CA_CERTS. Turning off "http.proxyStrictSSL" also works but trusts any certificate on proxied connections.',
          host,
          code,
          EXTRA_CA_SETTING,
        )
      : words(
          'The TLS certificate of {0} is signed by an authority this computer does not trust ({1}). If your network uses its own certificate authority, put its certificate (PEM) in a file and set "{2}" to that file in your user settings, or start VS Code with NODE_EXTRA_CA_CERTS.',
          host,
          code,
          EXTRA_CA_SETTING,
        );
    return new GatewayError('network', message, { code, cause: err });
  }
  return new GatewayError(
    'network',
    words(
      'The TLS certificate of {0} was not accepted ({1}). Check the base address; the certificate may have expired or be for another name.',
      host,
      code,
    ),
    { code, cause: err },
  );
}
