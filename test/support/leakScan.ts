import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** Every file below `dir` that contains one of `secrets`, as "file: secret…" lines. */
export async function findLeaks(dir: string, secrets: string[]): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const leaks: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const content = await fs.readFile(file).catch(() => Buffer.alloc(0));
    for (const secret of secrets) {
      if (content.includes(secret) || content.includes(Buffer.from(secret, 'utf16le')))
        leaks.push(`${path.relative(dir, file)}: ${secret.slice(0, 6)}…`);
    }
  }
  return leaks;
}
