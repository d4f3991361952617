/**
 * A tool result saved next to its source file takes the one unique-name rule of the extension
 * (`name.md`, then `name_2.md`…, as generated images and videos do) and never replaces a file.
 */
// First: answers `vscode` for every host module imported after it.
import './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readableText } from '../../../src/core/tools/readableText';
import { saveBeside } from '../../../src/host/tools/resultSaving';

describe('Tool results saved beside their source', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'save-beside-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names them report.md, report_2.md… and leaves existing files alone', async () => {
    const source = vscode.Uri.file(path.join(dir, 'report.pdf'));
    writeFileSync(path.join(dir, 'report_3.md'), 'mine');
    const saved: string[] = [];
    for (const text of ['# one', '# two', '# three'])
      saved.push(path.basename((await saveBeside(source, text)).fsPath));
    assert.deepEqual(saved, ['report.md', 'report_2.md', 'report_4.md']);
    assert.equal(readFileSync(path.join(dir, 'report.md'), 'utf8'), readableText('# one'));
    assert.equal(readFileSync(path.join(dir, 'report_3.md'), 'utf8'), 'mine');
    assert.deepEqual(
      readdirSync(dir).sort(),
      ['report.md', 'report.pdf', 'report_2.md', 'report_3.md', 'report_4.md'].filter((n) => n !== 'report.pdf').sort(),
    );
  });
});
