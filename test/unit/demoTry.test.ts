/**
 * The demo's start box lists what a newcomer can try beyond the one demo key: the second key and
 * the double's markers. Each marker it names must be one the double acts on, and the key one the
 * double knows, so the box never promises what the double does not do.
 */
import assert from 'node:assert/strict';
import { CHAT_SCENARIOS, MEDIA_SCENARIOS, TEAM_KEY } from '../gateway';
import { DEFAULT_KEYS } from '../gateway/defaults';
import { DEMO_TRY_LIST } from '../demo/support';

/** `[[slow:800]]` → `[[slow:MS]]`, `[[tools:searchWeb]]` → `[[tools:`: the form the scenario lists use. */
function markerName(marker: string): string {
  return marker.replace(/^\[\[([\w-]+).*$/, '$1');
}

describe("The demo's start box", () => {
  const text = DEMO_TRY_LIST.join('\n');

  it('names the second demo key, in its group "team"', () => {
    assert.ok(text.includes(TEAM_KEY));
    assert.equal(DEFAULT_KEYS.find((k) => k.key === TEAM_KEY)?.group, 'team');
    assert.match(text, /group "team"/);
  });

  it('names only markers the double acts on, chat and media, and tool use', () => {
    const known = new Set([...CHAT_SCENARIOS, ...MEDIA_SCENARIOS].map((s) => markerName(s.marker)));
    const named = [...text.matchAll(/\[\[[^\]]+\]\]/g)].map((m) => m[0]);
    for (const marker of ['[[incomplete]]', '[[failed]]', '[[fail]]', '[[tools:'])
      assert.ok(
        named.some((n) => n.startsWith(marker.replace(/\]\]$/, ''))),
        `${marker} is listed`,
      );
    assert.ok(named.some((n) => n.startsWith('[[slow:')));
    assert.deepEqual(
      named.filter((n) => !known.has(markerName(n))),
      [],
    );
  });
});
