import { createHash } from 'node:crypto';
import type * as vscode from 'vscode';
import type { KimiFile } from '../../core/tools/kimi';

/**
 * The second provider's files belong to the key that uploaded them, so the list is kept per key.
 * The key itself is never stored: only a one-way fingerprint of it names the list.
 */
export class KimiFileList {
  constructor(private readonly state: vscode.Memento) {}

  async add(key: string, file: KimiFile): Promise<void> {
    const all = this.all();
    const id = fingerprint(key);
    all[id] = [file, ...(all[id] ?? []).filter((f) => f.id !== file.id)].slice(0, 200);
    await this.state.update('kimi.files', all);
  }

  list(key: string): KimiFile[] {
    return this.all()[fingerprint(key)] ?? [];
  }

  async remove(key: string, fileId: string): Promise<void> {
    const all = this.all();
    const id = fingerprint(key);
    all[id] = (all[id] ?? []).filter((f) => f.id !== fileId);
    await this.state.update('kimi.files', all);
  }

  private all(): Record<string, KimiFile[]> {
    return { ...this.state.get<Record<string, KimiFile[]>>('kimi.files', {}) };
  }
}

function fingerprint(key: string): string {
  return createHash('sha256').update(`model-gateway:${key}`).digest('hex').slice(0, 16);
}
