/**
 * One answer per conversation across windows: two chat controllers (two windows) on one store
 * folder. The claim on a conversation is in the store, so the other window is refused (and offered
 * a new conversation) while an answer is written; a crashed window's claim expires; a final save
 * that fails is shown.
 */
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationClaims } from '../../../src/core/chat/store/claims';
import { useDoubleClient } from '../../support/client';
import { until } from '../../support/until';
import { openWindow, type TestWindow } from './windows';

const CHAT_PATH = '/v1/chat/completions';
/** An answer that streams for a few seconds: long enough to act while it streams. */
const SLOW = '[[slow:40]] [[long:2]]';
const CLAIMS = { heartbeatMs: 100, expiryMs: 400 };

describe('Chat: one answer per conversation across windows', function () {
  this.timeout(60_000);
  const double = useDoubleClient(undefined, {
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });
  let dir: string;
  let one: TestWindow;
  let two: TestWindow;

  beforeEach(async () => {
    ui.shown = [];
    ui.choices = [];
    dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-windows-'));
    one = openWindow(dir, double.gw.url, double.http, CLAIMS);
    two = openWindow(dir, double.gw.url, double.http, CLAIMS);
    await one.chat.sendSnapshot();
    await two.chat.sendSnapshot();
  });
  afterEach(async () => {
    one.dispose();
    two.dispose();
    await until(
      () => one.chat.sessions.all().length === 0 && two.chat.sessions.all().length === 0,
      'every answer has settled',
    );
    rmSync(dir, { recursive: true, force: true });
  });

  const chatRequests = () => double.gw.log.filter((e) => e.path === CHAT_PATH);

  it('while window 1 answers, window 2 can neither send, retry nor edit there; it is told and offered a new conversation', async () => {
    await one.chat.send('first');
    const id = one.chat.currentConversationId as string;
    const [question, firstAnswer] = (await one.store.load(id))?.messages ?? [];
    await two.chat.switchTo(id);
    const streaming = one.chat.send(`${SLOW} second`);
    await until(() => one.chat.shown.answer?.message !== undefined, 'window 1 streams');
    ui.choices.push('New conversation');
    assert.equal(await two.chat.send('from window 2'), undefined);
    await until(
      () => two.chat.currentConversationId === undefined,
      'window 2 shows a new conversation (the offer was taken)',
    );
    await two.chat.switchTo(id);
    assert.equal(await two.chat.editLast('edited in window 2', question?.id as string), undefined);
    assert.equal(await two.chat.regenerate(firstAnswer?.id as string), undefined);
    const elsewhere = ui.shown.filter((s) => /in another VS Code window/.test(s.message));
    assert.equal(elsewhere.length, 3, JSON.stringify(ui.shown));
    assert.deepEqual(elsewhere[0]?.actions, ['New conversation']);
    assert.equal(chatRequests().filter((r) => /window 2/.test(r.bodyText ?? '')).length, 0, 'window 2 sent nothing');
    const answer = await streaming;
    assert.equal(answer?.status, 'done');
    const stored = (await one.store.load(id))?.messages ?? [];
    assert.deepEqual(
      stored.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
      'window 2 wrote nothing into it',
    );
    assert.equal(stored.at(-1)?.text, answer?.text);
    assert.ok(!ui.shown.some((s) => /could not be saved/.test(s.message)));
    // Released when the answer ended: window 2 may go on now.
    assert.equal((await two.chat.send('now window 2'))?.status, 'done');
    assert.equal((await two.store.load(id))?.messages.length, 6);
  });

  it("a hung window's claim expires once this window has seen it unrefreshed for the expiry", async () => {
    await one.chat.send('first');
    const id = one.chat.currentConversationId as string;
    // A window that hangs mid-answer: its claim file stays and is no longer refreshed (its beat never runs).
    const hung = new ConversationClaims(path.join(dir, 'conversations'), {
      ...CLAIMS,
      schedule: () => () => undefined,
    });
    assert.equal(await hung.take(id), true);
    assert.equal(await one.chat.send('refused while the hung claim is fresh'), undefined);
    assert.ok(ui.shown.some((s) => /in another VS Code window/.test(s.message)));
    await until(async () => !(await one.chat.claims.heldElsewhere(id)), 'the claim expired');
    assert.equal((await one.chat.send('after it expired'))?.status, 'done');
    hung.dispose();
  });

  it('a closing window gives its claims back: another window may answer there at once', async () => {
    await one.chat.send('first');
    const id = one.chat.currentConversationId as string;
    const closing = new ConversationClaims(path.join(dir, 'conversations'), { ...CLAIMS, expiryMs: 60 * 60_000 });
    assert.equal(await closing.take(id), true);
    assert.equal(await one.chat.claims.heldElsewhere(id), true);
    closing.dispose();
    assert.equal(await one.chat.claims.heldElsewhere(id), false);
    assert.equal((await one.chat.send('right after the other window closed'))?.status, 'done');
  });

  it('a claim file this version cannot read counts as held while it is fresh', async () => {
    await one.chat.send('first');
    const id = one.chat.currentConversationId as string;
    mkdirSync(path.join(dir, 'conversations', '.claims'), { recursive: true });
    const file = path.join(dir, 'conversations', '.claims', `${id}.json`);
    writeFileSync(file, JSON.stringify({ v: 2, holder: { window: 'future' } }));
    assert.equal(await one.chat.claims.heldElsewhere(id), true);
    // Its file time says nothing (another machine's clock may set any): only this window's own watch counts.
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    assert.equal(await one.chat.claims.heldElsewhere(id), true, 'an old file time alone does not free it');
    await until(async () => !(await one.chat.claims.heldElsewhere(id)), 'seen unrefreshed for the expiry');
  });

  it('window 2 deletes the conversation window 1 answers in: window 1 stops, and is told its answer was not saved', async () => {
    const streaming = one.chat.send(`${SLOW} doomed`);
    // Text has arrived: the request is under way. (Deleted before the request read the history, the
    // answer ends as cut, with nothing sent: a busy machine once got there first.)
    await until(() => (one.chat.shown.answer?.message?.text.length ?? 0) > 0, 'window 1 streams');
    const id = one.chat.currentConversationId as string;
    ui.answers.push('Delete');
    await two.chat.handle({ type: 'deleteConversation', id });
    const answer = await streaming;
    assert.equal(answer?.status, 'stopped', 'stopped at its next heartbeat');
    assert.ok(
      ui.shown.some((s) => /The answer could not be saved: The conversation was deleted/.test(s.message)),
      JSON.stringify(ui.shown),
    );
    assert.equal(await one.store.open(id), undefined, 'nothing brought it back');
  });
});
