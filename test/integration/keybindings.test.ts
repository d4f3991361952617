import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { parse } from 'jsonc-parser';

interface Binding {
  key: string;
  command: string;
  when?: string;
}

/** The platform's key of a manifest keybinding (`mac` on macOS, `key` elsewhere). */
function keyOf(b: { key: string; mac?: string }): string {
  return (process.platform === 'darwin' && b.mac ? b.mac : b.key).toLowerCase();
}

/** Modifier order does not matter: `ctrl+shift+alt+g` and `shift+alt+ctrl+g` are one key (chords are kept apart). */
function normalise(key: string): string {
  return key
    .split(' ')
    .map((chord) => chord.split('+').sort().join('+'))
    .join(' ');
}

describe('Keybindings', () => {
  it("the extension's keybindings clash with none of this VS Code's default keybindings", async () => {
    const ext = vscode.extensions.all.find((e) => e.packageJSON?.name === 'model-gateway');
    assert.ok(ext, 'the extension is installed');
    const ours = (ext.packageJSON.contributes.keybindings ?? []) as { key: string; mac?: string; command: string }[];
    assert.ok(ours.length >= 3, 'focus chat, add selection and new chat have keybindings');
    // VS Code renders its default keybindings (every command's, for this platform) as this document.
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse('vscode://defaultsettings/keybindings.json'));
    const defaults = parse(doc.getText()) as Binding[];
    assert.ok(defaults.length > 200, `the defaults were read (${defaults.length})`);
    // The document lists the extensions' keybindings too; ours are what is being checked.
    const taken = new Map(
      defaults
        .filter((d) => !d.command.startsWith('modelGateway.'))
        .map((d) => [normalise(d.key.toLowerCase()), d.command]),
    );
    // Sanity: the comparison finds a real default (Ctrl+Shift+P / Cmd+Shift+P opens the palette).
    assert.ok(taken.has(normalise(process.platform === 'darwin' ? 'shift+cmd+p' : 'ctrl+shift+p')));
    for (const b of ours) {
      const key = normalise(keyOf(b));
      assert.equal(taken.get(key), undefined, `${keyOf(b)} (${b.command}) is VS Code's ${taken.get(key)}`);
    }
  });
});
