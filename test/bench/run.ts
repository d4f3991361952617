/**
 * `npm run bench [-- --quick] [-- --only 1,3,5]`: the performance table of the issue "timing never
 * goes into tests". Starts what it needs on loopback (the gateway double, Chromium, code-server),
 * stops all of it, prints one table and writes it as JSON to bench-results/.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { activationRows } from './activation';
import { cachingRows } from './caching';
import { completionRows } from './completion';
import { conversationRows } from './conversation';
import { downloadRows } from './download';
import { chatScrollRows } from './chatScroll';
import { historyRows } from './history';
import { languageModelsRows } from './languageModels';
import { lmFirstProgressRows, lmToolLoopRows, lmToolRoundTripRows } from './lmProvider';
import { RESULTS_DIR, type BenchContext, type Row } from './lib';
import { renderingRows } from './rendering';
import { sizeRows } from './size';
import { firstTokenRows, startGateway, streamDecodingRows, type GatewayInfo } from './streams';
import { formatTable, markdownTable } from './table';
import { uploadRows } from './upload';
import type { ServiceChild } from './lib';

interface Section {
  id: string;
  title: string;
  /** Part of `--quick`. */
  quick: boolean;
  needsGateway: boolean;
  run: (ctx: BenchContext, gw: GatewayInfo) => Promise<Row[]>;
}

const SECTIONS: Section[] = [
  { id: '1', title: 'Size', quick: true, needsGateway: false, run: (ctx) => sizeRows(ctx) },
  { id: '2', title: 'Activation', quick: false, needsGateway: false, run: (ctx) => activationRows(ctx) },
  { id: '3', title: 'Stream decoding', quick: true, needsGateway: true, run: streamDecodingRows },
  { id: '4', title: 'First-token overhead', quick: true, needsGateway: true, run: firstTokenRows },
  { id: '5', title: 'Rendering', quick: true, needsGateway: true, run: renderingRows },
  { id: '6', title: 'History scale', quick: true, needsGateway: false, run: (ctx) => historyRows(ctx) },
  { id: '7', title: 'Upload', quick: false, needsGateway: true, run: uploadRows },
  { id: '8', title: 'Download', quick: false, needsGateway: true, run: downloadRows },
  { id: '9', title: 'Long conversation', quick: true, needsGateway: true, run: conversationRows },
  {
    id: '10',
    title: 'Chat view scrolled to the top',
    quick: true,
    needsGateway: false,
    run: (ctx) => chatScrollRows(ctx),
  },
  { id: '11', title: 'VS Code chat: first progress', quick: true, needsGateway: true, run: lmFirstProgressRows },
  { id: '12', title: 'VS Code chat: tool round trip', quick: true, needsGateway: true, run: lmToolRoundTripRows },
  { id: '13', title: 'VS Code chat: long agent session', quick: true, needsGateway: true, run: lmToolLoopRows },
  { id: '14', title: 'Prompt caching', quick: true, needsGateway: false, run: (ctx) => cachingRows(ctx) },
  { id: '15', title: 'Inline completion', quick: true, needsGateway: false, run: (ctx) => completionRows(ctx) },
  {
    id: '16',
    title: 'Language Models editor in VS Code 1.139',
    quick: false,
    needsGateway: false,
    run: (ctx) => languageModelsRows(ctx),
  },
];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
  const quick = values.quick ?? false;
  const only = values.only?.split(',').map((s) => s.trim());
  const sections = SECTIONS.filter((s) => (only ? only.includes(s.id) : !quick || s.quick));
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const work = fs.mkdtempSync(path.join(RESULTS_DIR, 'work-'));
  const started = Date.now();
  const ctx: BenchContext = {
    quick,
    work,
    log: (line) => console.log(`  [${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}`),
  };
  console.log(
    `Model Gateway benchmark${quick ? ' (quick)' : ''}: ${sections.map((s) => `${s.id} ${s.title}`).join(', ')}`,
  );
  const loadBefore = os.loadavg();
  if ((loadBefore[0] ?? 0) > os.cpus().length) {
    console.log(
      `  note: load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} cores: other work is running; expect noisy wall times (ratios alternate runs to compensate)`,
    );
  }

  const rows: Row[] = [];
  let gateway: ServiceChild<GatewayInfo> | undefined;
  let failures = 0;
  try {
    for (const section of sections) {
      const sectionStart = Date.now();
      ctx.log(`${section.id}. ${section.title}`);
      try {
        if (section.needsGateway && !gateway) gateway = await startGateway();
        rows.push(...(await section.run(ctx, gateway?.info as GatewayInfo)));
      } catch (err) {
        failures++;
        const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
        console.error(`  ${section.title} failed: ${message}`);
        rows.push({
          id: section.id,
          what: `${section.title}: could not be measured`,
          ours: '—',
          reference: '—',
          ratio: '—',
          goal: '—',
          pass: false,
          note: message.split('\n')[0],
        });
      }
      ctx.log(`${section.title} took ${((Date.now() - sectionStart) / 1000).toFixed(1)} s`);
    }
  } finally {
    await gateway?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }

  const seconds = (Date.now() - started) / 1000;
  console.log('');
  console.log(formatTable(rows));
  const missed = rows.filter((r) => r.pass === false).length;
  const loadAfter = os.loadavg();
  console.log(
    `\nLoad average before/after: ${loadBefore[0]?.toFixed(1)} / ${loadAfter[0]?.toFixed(1)} on ${os.cpus().length} cores.`,
  );
  console.log(
    `${rows.length} rows: ${rows.filter((r) => r.pass === true).length} pass, ${missed} miss, ${rows.filter((r) => r.pass === undefined).length} reported only; ${seconds.toFixed(0)} s${quick ? ' (quick)' : ''}`,
  );

  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const report = {
    when: new Date().toISOString(),
    quick,
    sections: sections.map((s) => s.id),
    seconds,
    machine: {
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: os.cpus().length,
      loadAverageBefore: loadBefore,
      loadAverageAfter: os.loadavg(),
    },
    rows,
  };
  const json = JSON.stringify(report, null, 2) + '\n';
  const file = path.join(RESULTS_DIR, `bench-${quick ? 'quick-' : ''}${stamp}.json`);
  fs.writeFileSync(file, json);
  fs.writeFileSync(path.join(RESULTS_DIR, quick ? 'latest-quick.json' : 'latest.json'), json);
  fs.writeFileSync(path.join(RESULTS_DIR, quick ? 'latest-quick.md' : 'latest.md'), markdownTable(rows) + '\n');
  console.log(`Written: ${path.relative(process.cwd(), file)}`);
  process.exitCode = failures ? 1 : 0;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
