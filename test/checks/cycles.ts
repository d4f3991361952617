/**
 * The import-cycle check, one of the static checks (run.ts): no file in src may reach itself again
 * through its imports. Type-only imports count too: they have no runtime effect, but two files that
 * import each other's types cannot be read, tested or split one without the other (the chat host's
 * controller, view router and conversation actions were such a knot). Exits 1, listing the cycles,
 * when there is a cycle not in KNOWN or a KNOWN one is gone (its entry then goes too).
 */
import * as path from 'node:path';
import madge from 'madge';

/**
 * Type-only cycles that were there when the check came in, in files other work owns; each entry goes
 * when its cycle is broken. A new cycle fails.
 */
export const KNOWN: readonly string[] = [
  'core/chat/cacheFields.ts > core/chat/promptCache.ts',
  'core/chat/cacheFields.ts > core/chat/promptCache.ts > core/chat/thinking.ts > core/models/types.ts',
  'core/chat/promptCache.ts > core/chat/thinking.ts > core/models/types.ts > core/chat/tokenCost.ts > core/chat/events.ts',
  'core/chat/thinking.ts > core/models/types.ts > core/chat/tokenCost.ts > core/chat/events.ts',
  'core/models/types.ts > core/chat/tokenCost.ts > core/chat/events.ts',
  'core/chat/store/core.ts > core/chat/store/migration.ts',
  'host/services.ts > host/protocolSwitch.ts',
];

const root = path.resolve(__dirname, '../..');

/** The cycles among the files under src, each as `a.ts > b.ts > …` (madge's own order). */
export async function importCycles(): Promise<string[]> {
  const result = await madge(path.join(root, 'src'), {
    baseDir: path.join(root, 'src'),
    fileExtensions: ['ts'],
    tsConfig: path.join(root, 'tsconfig.json'),
    detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
  });
  return result.circular().map((cycle) => cycle.join(' > '));
}

async function main(): Promise<void> {
  const cycles = await importCycles();
  const added = cycles.filter((c) => !KNOWN.includes(c));
  const gone = KNOWN.filter((c) => !cycles.includes(c));
  for (const c of added) console.log(`import cycle: ${c}`);
  for (const c of gone) console.log(`no longer a cycle (remove it from KNOWN in test/checks/cycles.ts): ${c}`);
  if (added.length || gone.length) process.exitCode = 1;
  else console.log(`no new import cycle in src (${KNOWN.length} known type-only ones)`);
}

if (require.main === module)
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
