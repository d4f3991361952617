/**
 * Row 9: the cost of sending a message at the end of a long conversation, against a short one
 * (conversationChild.ts, in a process of its own so that its CPU time is the client's alone).
 */
import { bytes, median, ms, ratio, runJsonChild, type BenchContext, type Row } from './lib';
import type { GatewayInfo } from './streams';

interface Sample {
  cpuMs: number;
  wallMs: number;
  bytesWritten: number;
  bytesRead: number;
  postedBytes: number;
  answerChars: number;
}

interface ChildResult {
  long: number;
  short: number;
  samples: Record<'long' | 'short', Sample[]>;
}

const GOAL = 1.5;

export async function conversationRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  const rounds = ctx.quick ? 3 : 7;
  const kb = ctx.quick ? 16 : 24;
  ctx.log(`long conversation: ${rounds} rounds, [[long:${kb}]]`);
  const r = await runJsonChild<ChildResult>(
    'conversationChild.ts',
    [gw.url, gw.key, ctx.work, String(rounds), String(kb)],
    600_000,
  );
  const of = (which: 'long' | 'short', key: keyof Sample) => median(r.samples[which].map((s) => s[key]));
  const cpu = { long: of('long', 'cpuMs'), short: of('short', 'cpuMs') };
  const written = { long: of('long', 'bytesWritten'), short: of('short', 'bytesWritten') };
  const what = `message ${r.long.toLocaleString('en')} (a) vs message ${r.short} (b)`;
  const common = `median of ${rounds}; the view shows the conversation; an answer of ${Math.round(of('long', 'answerChars') / 1024)} KB streamed over a few seconds (checkpoints every second)`;
  return [
    {
      id: '9',
      what: `Long conversation cost: sending ${what}, client CPU time`,
      ours: ms(cpu.long),
      reference: ms(cpu.short),
      ratio: ratio(cpu.long / cpu.short),
      goal: `a/b ≤ ${GOAL}`,
      pass: cpu.long / cpu.short <= GOAL,
      note:
        `${common}; wall ${ms(of('long', 'wallMs'))} vs ${ms(of('short', 'wallMs'))} (paced by the stream); ` +
        `log bytes read ${bytes(of('long', 'bytesRead'))} vs ${bytes(of('short', 'bytesRead'))}; posted to the view ${bytes(of('long', 'postedBytes'))} vs ${bytes(of('short', 'postedBytes'))}`,
      data: { ...r },
    },
    {
      id: '9',
      what: `Long conversation cost: sending ${what}, bytes written`,
      ours: bytes(written.long),
      reference: bytes(written.short),
      ratio: ratio(written.long / written.short),
      goal: `a/b ≤ ${GOAL}`,
      pass: written.long / written.short <= GOAL,
      note: 'bytes the store wrote to the conversation log (question, placeholder, checkpoints, final answer); the metadata file is rewritten whole at the same size either way',
    },
  ];
}
