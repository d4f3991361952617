/**
 * A failed answer kept in a conversation is shown in the display language of the day it is read:
 * the store keeps what its message was made of (words), and the view words it again. A record an
 * older version wrote (no words), or a newer one (words of a shape this version does not know),
 * still shows the message as it was kept.
 */
import * as assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { toMarkdown, toView } from '../../src/core/chat/conversationForms';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { failureRecord, failureText } from '../../src/core/chat/failures';
import type { StoredMessage } from '../../src/core/chat/store/log';
import { errorFromStreamPayload } from '../../src/core/errorBody';
import { GatewayError } from '../../src/core/errors';
import * as T from '../../src/core/media/videoTaskStates';
import { words } from '../../src/shared/words';

const zh = JSON.parse(readFileSync('l10n/bundle.l10n.zh-cn.json', 'utf8')) as Record<string, string>;

const failed = (id: string, error: StoredMessage['error']): StoredMessage => ({
  id,
  role: 'assistant',
  text: 'Half an answer',
  status: 'cut',
  error,
  createdAt: 2,
});

describe('a failed answer in the language it is shown in', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'failure-words-'));
    l10n.config({ contents: {} });
  });
  afterEach(() => {
    l10n.config({ contents: {} });
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a failure seen in English and shows it in Chinese after the language changed', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create({ title: 'Quota' });
    const error = errorFromStreamPayload({
      message: '额度不足',
      type: 'new_api_error',
      code: 'insufficient_user_quota',
    });
    assert.match(error.message, /^The answer stopped with an error\. The key's quota is not enough/);
    await store.append(c.id, failed('a1', failureRecord(error)));
    store.dispose();

    l10n.config({ contents: zh });
    const page = await new ConversationStore(dir).open(c.id);
    const [kept] = page?.messages ?? [];
    assert.ok(kept, 'the answer was kept');
    const shown = toView(kept).error;
    assert.equal(shown?.kind, 'quota');
    assert.match(
      shown?.message ?? '',
      /^回答因错误而中断。此密钥的额度不足以完成本次请求。网关返回：额度不足。没有产生任何扣费/,
    );
    assert.doesNotMatch(shown?.message ?? '', /[A-Za-z]{4}/, 'no English left in the Chinese message');
    assert.equal(shown && 'words' in shown, false, 'the view gets the words worded, not the words');
    assert.match(
      toMarkdown({ ...c, messages: [kept] }),
      /回答因错误而中断。此密钥的额度不足/,
      'the Markdown export words it the same way',
    );

    l10n.config({ contents: {} });
    assert.equal(toView(kept).error?.message, error.message, 'and in English again once English is back');
  });

  it('shows the message of a failure an older version kept (no words) or a newer one (words it cannot read)', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    const line = (i: number, error: object) =>
      `${JSON.stringify({ k: 'a', at: 1, i, m: { ...failed(`a${i}`, undefined), error } })}\n`;
    appendFileSync(
      path.join(dir, `${c.id}.log`),
      line(0, { kind: 'server', message: 'The gateway had an internal error (HTTP 500). Try again later.' }) +
        line(1, { kind: 'server', message: 'Kept by a newer version.', words: { sentence: ['a', 'b'] } }),
    );
    store.dispose();

    l10n.config({ contents: zh });
    const page = await new ConversationStore(dir).open(c.id);
    assert.deepEqual(
      page?.messages.map((m) => toView(m).error?.message),
      ['The gateway had an internal error (HTTP 500). Try again later.', 'Kept by a newer version.'],
    );
  });

  it('keeps a failure that was not made from words (a text as it came) as that text', () => {
    const record = failureRecord(new Error('socket hang up'));
    assert.deepEqual(record, { kind: 'protocol', message: 'Error: socket hang up' });
    l10n.config({ contents: zh });
    assert.equal(toView(failed('a', record)).error?.message, 'Error: socket hang up');
    assert.deepEqual(failureRecord(new GatewayError('network', 'as it came', { requestId: 'r1' })), {
      kind: 'network',
      message: 'as it came',
      requestId: 'r1',
    });
  });

  it('keeps a failed video task in its words: its status line and paragraph follow the language of the day', () => {
    const policy = { baseMs: 1000, maxMs: 10_000, maxPollMs: 0, maxErrors: 3 };
    const params = { model: 'video-model', prompt: 'a cat', size: '1280x720', duration: 5, outputDir: '/out' };
    const running = T.accepted(T.createTask(params, 'local-1', 1), 'task_1', 1, policy);
    const failed = T.observed(running, { status: 'FAILURE', rawStatus: 'FAILURE' }, 2, policy);
    const refused = T.submitFailed(
      T.createTask(params, 'local-2', 1),
      new GatewayError('badRequest', words('The model {0} is not a chat model available to this key.', 'x')),
      2,
    );
    assert.match(T.describeTask(failed), /^Failed: no reason given$/);
    // Stored and read back as any window reads the task list.
    const [kept, keptRefusal] = T.storedTasksSchema.parse(JSON.parse(JSON.stringify([failed, refused])));
    assert.ok(kept?.error && keptRefusal?.error);
    l10n.config({ contents: zh });
    assert.equal(T.describeTask(kept), `${zh['Failed: {0}']?.replace('{0}', zh['no reason given'] ?? '')}`);
    assert.equal(
      failureText(kept.error),
      (
        zh['{0} It was not resubmitted; change the prompt or parameters and submit again if you want another try.'] ??
        ''
      ).replace('{0}', zh['The gateway reports the task as failed without a reason.'] ?? ''),
    );
    assert.equal(
      failureText(keptRefusal.error),
      zh['The model {0} is not a chat model available to this key.']?.replace('{0}', 'x'),
    );
    // A task an older version stored (no words) shows what it kept.
    const { words: _w, reasonWords: _r, ...older } = kept.error;
    assert.equal(failureText({ ...older }), kept.error.message);
    assert.match(T.describeTask({ ...kept, error: older }), /no reason given/);
  });
});
