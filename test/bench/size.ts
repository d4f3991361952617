/**
 * Row 1: what is shipped. Builds with `node esbuild.js --production`, packages with vsce into
 * bench-results/, and reads the sizes back from the .vsix itself (so they are what a user downloads),
 * with esbuild's metafile for what takes the room in each bundle.
 */
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { bytes, RESULTS_DIR, ROOT, runProcess, type BenchContext, type Row } from './lib';

type HostMetafiles = Record<'entry' | 'features' | 'http' | 'undici', esbuild.Metafile>;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the project's build script is CommonJS JavaScript
const { buildHost, workerText } = require('../../esbuild.js') as {
  buildHost: (o: {
    production: boolean;
    outdir: string;
    absWorkingDir: string;
    logLevel: esbuild.LogLevel;
  }) => Promise<HostMetafiles>;
  /** Builds `import text from './file?worker'` (the chat's highlighting worker) as esbuild.js does. */
  workerText: esbuild.Plugin;
};

const VSIX_GOAL = 512 * 1024;

export interface ZipEntry {
  name: string;
  size: number;
  compressed: number;
}

/** The entries of a zip file, from its central directory. */
export function zipEntries(file: string): ZipEntry[] {
  const buf = fs.readFileSync(file);
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error(`${file} is not a zip file`);
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: damaged central directory`);
    const compressed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLength = buf.readUInt16LE(at + 28);
    const extra = buf.readUInt16LE(at + 30);
    const comment = buf.readUInt16LE(at + 32);
    entries.push({ name: buf.subarray(at + 46, at + 46 + nameLength).toString('utf8'), size, compressed });
    at += 46 + nameLength + extra + comment;
  }
  return entries;
}

/** The packages (or src folders) that take the most room in a bundle's output. */
async function biggestInputs(options: esbuild.BuildOptions): Promise<string> {
  const result = await esbuild.build({
    ...options,
    write: false,
    metafile: true,
    minify: true,
    sourcemap: false,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
  return biggestOf(result.metafile);
}

function biggestOf(metafile: esbuild.Metafile): string {
  const output = Object.values(metafile.outputs).find(
    (o) => !o.entryPoint?.endsWith('.map') && Object.keys(o.inputs).length,
  );
  const byGroup = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    // The highlighting worker's bundle is one text input (esbuild.js, workerText): highlight.js and its grammars.
    const group = input.startsWith('worker-text:')
      ? 'highlighting worker (highlight.js)'
      : m
        ? (m[1] as string)
        : input
            .replace(/^src\//, '')
            .split('/')
            .slice(0, 2)
            .join('/');
    byGroup.set(group, (byGroup.get(group) ?? 0) + bytesInOutput);
  }
  return [...byGroup]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([g, n]) => `${g} ${bytes(n)}`)
    .join(', ');
}

export async function sizeRows(ctx: BenchContext): Promise<Row[]> {
  ctx.log('node esbuild.js --production');
  const build = await runProcess(process.execPath, ['esbuild.js', '--production'], { timeoutMs: 120_000 });
  if (build.code !== 0) throw new Error(`the production build failed: ${build.stderr}`);
  const vsix = path.join(RESULTS_DIR, 'model-gateway.vsix');
  fs.rmSync(vsix, { force: true });
  ctx.log('vsce package');
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const pack = await runProcess(
    npx,
    ['vsce', 'package', '--no-dependencies', '--no-rewrite-relative-links', '--out', vsix],
    { timeoutMs: 300_000 },
  );
  if (pack.code !== 0 || !fs.existsSync(vsix)) throw new Error(`vsce package failed: ${pack.stderr || pack.stdout}`);

  const entries = zipEntries(vsix);
  const vsixBytes = fs.statSync(vsix).size;
  const entry = (name: string) => entries.find((e) => e.name === `extension/${name}`);
  const rows: Row[] = [];
  const host = entry('dist/extension.js');
  const features = entry('dist/features.js');
  const metafiles = await buildHost({
    production: true,
    outdir: path.join(ctx.work, 'host-size'),
    absWorkingDir: ROOT,
    logLevel: 'silent',
  });
  /** A reported row for one bundle file of the .vsix: its size, and what its absence would break. */
  const fileRow = (what: string, part: ReturnType<typeof entry>, present: string, missing: string): Row => ({
    id: '1',
    what,
    ours: part ? bytes(part.size) : 'missing',
    reference: '—',
    ratio: '—',
    goal: '(reported)',
    pass: part ? undefined : false,
    note: part ? `${bytes(part.compressed)} compressed in the .vsix${present}` : missing,
    data: { entry: part },
  });
  rows.push(
    fileRow(
      'Size: host entry dist/extension.js (what activation loads)',
      host,
      `; biggest parts: ${biggestOf(metafiles.entry)}`,
      'not in the .vsix',
    ),
    fileRow(
      'Size: host features dist/features.js, loaded by the first command or view',
      features,
      `; biggest parts: ${biggestOf(metafiles.features)}`,
      'not in the .vsix: no command or view would work',
    ),
  );
  // The parts the first request loads: a row each.
  for (const [file, what] of [
    ['dist/http.js', 'the HTTP client'],
    ['dist/undici.js', 'undici'],
  ] as const) {
    rows.push(
      fileRow(
        `Size: ${what}, loaded by the first request: ${file}`,
        entry(file),
        '',
        'not in the .vsix: the extension could not make a request',
      ),
    );
  }
  for (const e of entries.filter((x) => /^extension\/dist\/webview\/[^/]+\.js$/.test(x.name))) {
    const name = path.basename(e.name, '.js');
    const src = path.join(ROOT, 'src', 'webview', name, 'main.ts');
    const inputs = fs.existsSync(src)
      ? await biggestInputs({
          entryPoints: [src],
          bundle: true,
          platform: 'browser',
          format: 'iife',
          target: 'es2022',
          alias: { entities: path.join(ROOT, 'src/webview/chat/entities.ts') },
          plugins: [workerText],
        })
      : '';
    rows.push({
      id: '1',
      what: `Size: webview bundle dist/webview/${name}.js`,
      ours: bytes(e.size),
      reference: '—',
      ratio: '—',
      goal: '(reported)',
      pass: undefined,
      note: `${bytes(e.compressed)} compressed in the .vsix, ${bytes(zlib.gzipSync(fs.readFileSync(path.join(ROOT, 'dist', 'webview', `${name}.js`))).length)} gzip${inputs ? `; biggest parts: ${inputs}` : ''}`,
      data: { entry: e },
    });
  }
  const largest = [...entries].sort((a, b) => b.compressed - a.compressed).slice(0, 5);
  // What .vscodeignore means to leave out but a `!` re-include pattern lets in: source maps a
  // development build left in dist/ (a fresh clone has none) and the README screenshots.
  const maps = entries.filter((e) => e.name.endsWith('.map'));
  const shots = entries.filter((e) => e.name.includes('/screenshots/'));
  const sum = (list: ZipEntry[]) => list.reduce((a, e) => a + e.compressed, 0);
  const extra: string[] = [];
  if (maps.length)
    extra.push(
      `${maps.length} stale source maps from a development build (${bytes(sum(maps))}; on a fresh clone the .vsix would be ${bytes(vsixBytes - sum(maps))})`,
    );
  if (shots.length) extra.push(`${shots.length} README screenshots (${bytes(sum(shots))})`);
  rows.push({
    id: '1',
    what: `Size: .vsix (${entries.length} files)`,
    ours: bytes(vsixBytes),
    reference: '—',
    ratio: '—',
    goal: '≤ 512 KiB',
    pass: vsixBytes <= VSIX_GOAL,
    note:
      `largest entries (compressed): ${largest.map((e) => `${e.name.replace(/^extension\//, '')} ${bytes(e.compressed)}`).join(', ')}` +
      (extra.length
        ? `; .vscodeignore means to exclude, but its "!" patterns let in: ${extra.join(' and ')}; without both ${bytes(vsixBytes - sum(maps) - sum(shots))}`
        : ''),
    data: { vsixBytes, entries },
  });
  return rows;
}
