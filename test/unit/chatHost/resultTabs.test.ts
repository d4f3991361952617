import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
// First: answers `vscode` for every host module imported after it.
import './fakeVscode';
import { RESULT_SCHEME } from '../../../src/host/tools/results';

/**
 * A result tab VS Code restores after a reload asks for its text before anything else has woken the
 * extension. VS Code activates an extension for a document's scheme on `onFileSystem:<scheme>`; without
 * it the tab says only that the resource "cannot be found".
 */
describe('result tabs restored after a reload', () => {
  it('the manifest wakes the extension for the scheme result tabs use', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as {
      activationEvents: string[];
    };
    assert.ok(manifest.activationEvents.includes(`onFileSystem:${RESULT_SCHEME}`), manifest.activationEvents.join());
  });
});
