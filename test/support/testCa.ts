import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A throw-away certificate authority and one server certificate it signed for 127.0.0.1 and
 * localhost, made at test time so no private key is ever committed. The keys come from
 * node:crypto; Node cannot write an X.509 certificate by itself, so `openssl` signs them.
 */
export interface TestCa {
  /** The authority's certificate (PEM), what a user would put in modelGateway.extraCaCertificates. */
  caPem: string;
  /** A file holding an unrelated authority and then this one, as a corporate bundle would. */
  bundleFile: string;
  /** A file holding only this authority. */
  caFile: string;
  /** The server's identity, for the double's `tls` option. */
  server: { key: string; cert: string };
  dispose(): void;
}

/** `dnsNames`: more names the server certificate is valid for, beyond 127.0.0.1 and localhost. */
export function createTestCa(dnsNames: string[] = []): TestCa {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mg-test-ca-'));
  try {
    const caKey = writeKey(dir, 'ca.key');
    const serverKey = writeKey(dir, 'server.key');
    const caFile = path.join(dir, 'ca.pem');
    openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      caKey,
      '-out',
      caFile,
      '-days',
      '2',
      '-subj',
      '/CN=Model Gateway Test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    const csr = path.join(dir, 'server.csr');
    openssl(['req', '-new', '-key', serverKey, '-out', csr, '-subj', '/CN=127.0.0.1']);
    const ext = path.join(dir, 'server.ext');
    writeFileSync(
      ext,
      `subjectAltName=${['IP:127.0.0.1', 'DNS:localhost', ...dnsNames.map((n) => `DNS:${n}`)].join(',')}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`,
    );
    const serverCert = path.join(dir, 'server.pem');
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caFile,
      '-CAkey',
      caKey,
      '-set_serial',
      '0x' + Date.now().toString(16),
      '-days',
      '2',
      '-extfile',
      ext,
      '-out',
      serverCert,
    ]);
    const otherKey = writeKey(dir, 'other.key');
    const otherFile = path.join(dir, 'other.pem');
    openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      otherKey,
      '-out',
      otherFile,
      '-days',
      '2',
      '-subj',
      '/CN=Unrelated Test CA',
    ]);

    const caPem = readFileSync(caFile, 'utf8');
    const cert = readFileSync(serverCert, 'utf8');
    // A sanity check of the tool's output, so a broken openssl fails here and not as a TLS mystery.
    if (!new X509Certificate(cert).checkIssued(new X509Certificate(caPem)))
      throw new Error('openssl did not sign the server certificate with the test CA');
    const bundleFile = path.join(dir, 'bundle.pem');
    writeFileSync(bundleFile, `# an unrelated authority first\n${readFileSync(otherFile, 'utf8')}\n${caPem}`);
    return {
      caPem,
      caFile,
      bundleFile,
      server: { key: readFileSync(serverKey, 'utf8'), cert },
      dispose: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function writeKey(dir: string, name: string): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const file = path.join(dir, name);
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return file;
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stderr?: Buffer };
    if (e.code === 'ENOENT')
      throw new Error(
        'These tests need the openssl command to sign their throw-away test certificates; install openssl.',
      );
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString() ?? String(err)}`);
  }
}
