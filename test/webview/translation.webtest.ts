/**
 * Both webview apps in Chinese, in as many states as one page can show at once (every kind of
 * message, chip, error, notice, task and gallery card), checked for English words the app itself
 * put there (see untranslated.ts). Screenshots go to test-results/webview/.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { MediaHostMessage, MediaSnapshot } from '../../src/shared/mediaProtocol';
import type { HostMessage } from '../../src/shared/protocol';
import type { SuiteBuilder } from './chatView.webtest';
import { assistantMessage, RICH_ANSWER, snapshot, snapshotMessage, userMessage } from './fixtures';
import { closeAndCheck, type ChatPage, type WebviewHarness } from './harness';
import { hostStrings, type Shown, UntranslatedCheck } from './untranslated';

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-results', 'webview');
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A chat with every part the view can show: attachments, images, reasoning, sources, usage, errors, held-back images. */
export function chatShowcase(): HostMessage[] {
  const image = {
    id: 'b'.repeat(64),
    name: 'fox.png',
    mediaType: 'image/png' as const,
    bytes: 2_150,
    width: 48,
    height: 48,
    src: `data:image/png;base64,${PNG_1X1}`,
  };
  const answer = `${RICH_ANSWER}\n![a fox](https://pictures.example.test/fox.png) ![](https://pictures.example.test/b.png) ![x](http://plain.example.test/x.png) ![alt text](not a url)\n`;
  return [
    snapshotMessage(
      snapshot({
        hasOlder: true,
        notice: { message: '此密钥没有对话模型。', action: 'refreshModels' },
        models: [
          {
            id: 'gpt-4.1',
            provider: 'openai',
            protocols: ['responses', 'chatCompletions'],
            searchable: true,
            imageInput: true,
            imageNote: 'gpt-4.1 接受图像（模型目录列出了图像输入）。',
          },
          { id: 'glm-4.6', provider: 'zhipu', protocols: ['chatCompletions'], searchable: true, imageInput: false },
          { id: 'kimi-k2', provider: '', protocols: ['messages'], searchable: false },
        ],
        conversations: [
          { id: 'c1', title: '排序', updatedAt: 1_700_000_000_000, messageCount: 4 },
          { id: 'c2', title: '', updatedAt: 1_699_000_000_000, messageCount: 1 },
        ],
        messages: [
          userMessage('u1', 'How do I sort users by age?', {
            attachments: [
              { label: 'users.ts', chars: 12_345, truncated: true },
              { label: 'notes.md', chars: 320, truncated: false },
            ],
            images: [image],
          }),
          assistantMessage('a1', answer, {
            reasoning: 'The user wants a **comparator**.',
            usage: { inputTokens: 1200, outputTokens: 345, reasoningTokens: 20, totalTokens: 1565 },
            citations: [
              { url: 'https://developer.mozilla.org/sort', title: 'Array.prototype.sort()' },
              { url: 'https://example.org/a' },
            ],
            searches: ['js sort stable'],
          }),
          {
            id: 'n1',
            role: 'notice',
            text: '',
            status: 'done',
            notice: { kind: 'modelChange', from: 'glm-4.6', to: 'gpt-4.1', reason: 'imageNeedsVision' },
            createdAt: 1_700_000_002_000,
          },
          userMessage('u2', 'And in Rust?'),
          assistantMessage('a2', 'Use `sort_by_key`', {
            status: 'cut',
            error: { kind: 'network', message: '连接在回答途中断开。' },
          }),
          assistantMessage('a3', '', {
            status: 'cut',
            error: { kind: 'auth', message: 'API 密钥未被接受（HTTP 401）。' },
          }),
          assistantMessage('a4', 'Partial', { status: 'stopped' }),
          userMessage('u3', 'Next?'),
          assistantMessage('a5', '', { status: 'cut', error: { kind: 'modelUnavailable', message: '模型不可用。' } }),
        ],
        attachments: [
          { id: 'att1', label: 'main.ts', chars: 15_000, truncated: true },
          { id: 'att2', label: 'dot.png', chars: 0, truncated: false, image },
        ],
        remoteImageHosts: [],
        imageMaxBytes: 1024,
      }),
    ),
  ];
}

/** The Media Studio with a job, a task in every phase and a gallery with every kind of card. */
export function mediaShowcase(): MediaHostMessage[] {
  const started = Date.now() - 75_000;
  const task = {
    model: 'wan2.5-t2v-preview',
    size: '832*480',
    duration: 5,
    createdAt: started,
    canCancel: false,
    canResume: false,
    canRetryDownload: false,
    canResubmit: false,
  };
  const state: MediaSnapshot = {
    imageModels: [{ id: 'gpt-image-1', provider: 'openai' }],
    outerModels: [{ id: 'gpt-4.1', provider: 'openai' }],
    videoModels: [
      {
        id: 'wan2.5-t2v-preview',
        provider: 'alibaba',
        sizes: ['832*480', '480*832'],
        durations: [5, 10],
        defaultSize: '832*480',
        defaultDuration: 5,
        hintSource: 'verified',
      },
      { id: 'veo-3', provider: 'google', sizes: ['1280*720'], durations: [8], hintSource: 'catalog' },
      { id: 'mystery-video', provider: 'other', sizes: [], durations: [], hintSource: 'none' },
    ],
    defaults: {
      route: 'images',
      imageModel: 'gpt-image-1',
      outerModel: 'gpt-4.1',
      videoModel: 'wan2.5-t2v-preview',
      imageSize: '1024x1024',
      imageCount: 1,
      stream: false,
    },
    imageJob: {
      id: 'j1',
      route: 'responses',
      model: 'gpt-image-1',
      outerModel: 'gpt-4.1',
      prompt: '雪中的红狐',
      startedAt: started,
      state: 'running',
      partial: { src: `data:image/png;base64,${PNG_1X1}`, index: 0 },
      files: [],
    },
    tasks: [
      {
        ...task,
        localId: 't1',
        taskId: 'task-1',
        prompt: '雪中奔跑的狐狸',
        phase: 'running',
        remoteStatus: 'IN_PROGRESS',
        progress: 30,
        statusText: '生成中 30%',
        canCancel: true,
      },
      {
        ...task,
        localId: 't2',
        taskId: 'task-2',
        prompt: '海浪',
        phase: 'downloading',
        statusText: '正在下载',
        download: { received: 3_500_000, total: 9_000_000 },
        canCancel: true,
      },
      {
        ...task,
        localId: 't3',
        taskId: 'task-3',
        prompt: '城市夜景',
        phase: 'failed',
        statusText: '失败：无法下载视频',
        finishedAt: started + 60_000,
        error: { message: '下载链接已过期。', stage: 'download' },
        canRetryDownload: true,
        canResubmit: true,
      },
      {
        ...task,
        localId: 't4',
        taskId: 'task-4',
        prompt: '日出',
        phase: 'stopped',
        statusText: '已停止（由你停止）',
        finishedAt: started + 30_000,
        canResume: true,
        canResubmit: true,
      },
      {
        ...task,
        localId: 't5',
        taskId: 'task-5',
        prompt: '森林',
        phase: 'succeeded',
        statusText: '完成',
        finishedAt: started + 70_000,
        file: { path: '/workspace/media/forest.mp4', label: 'media/forest.mp4' },
      },
    ],
    gallery: [
      {
        id: 'g1',
        kind: 'image',
        prompt: '雪中的红狐',
        model: 'gpt-image-1',
        size: '1024x1024',
        pixels: { width: 48, height: 48 },
        createdAt: started,
        label: 'media/fox.png',
        src: `data:image/png;base64,${PNG_1X1}`,
        exists: true,
      },
      {
        id: 'g2',
        kind: 'image',
        prompt: '旧图',
        model: 'gpt-image-1',
        size: '512x512',
        createdAt: started - 86_400_000 * 3,
        label: 'media/old.png',
        exists: false,
      },
      {
        id: 'g3',
        kind: 'video',
        prompt: '森林',
        model: 'wan2.5-t2v-preview',
        size: '832*480',
        createdAt: started,
        label: 'media/forest.mp4',
        exists: true,
      },
    ],
    outputFolder: 'media/',
    notice: { message: '请设置 API 密钥以生成图像和视频。', action: 'setKey' },
  };
  return [{ type: 'snapshot', state }];
}

export function defineTranslationTests(t: SuiteBuilder, harness: () => WebviewHarness): void {
  let page: ChatPage | undefined;
  const check = new UntranslatedCheck();
  t.afterEach(async () => {
    if (!page) return;
    const closing = page;
    page = undefined;
    await closeAndCheck(closing);
  });

  /** Collects what the page shows now, adding to `into`. */
  const collect = async (p: ChatPage, into: Shown[]): Promise<void> => {
    into.push(...(await p.probe<Shown[]>('shownWords')));
  };

  t.it('the chat shows no English of its own when VS Code speaks Chinese', async () => {
    page = await harness().open({ language: 'zh-cn', viewport: { width: 460, height: 1400 } });
    const p = page;
    const shown: Shown[] = [];
    await collect(p, shown); // "Loading…"
    const messages = chatShowcase();
    await p.push(...messages);
    await p.page.locator('.msg[data-id="u3"]').getByRole('button', { name: '编辑并重新发送你的上一条消息' }).click();
    await collect(p, shown);
    // The other protocol's tooltip, another model's chip and notes, a streaming answer.
    const first = messages[0];
    if (first?.type !== 'snapshot') throw new Error('the showcase starts with a snapshot');
    const { conversationId: _shown, ...rest } = first.state;
    const streaming = snapshotMessage({
      ...rest,
      model: 'glm-4.6',
      protocolOverride: 'chatCompletions',
      messages: [userMessage('u9', 'Hi'), assistantMessage('a9', '', { status: 'streaming', reasoning: 'hmm' })],
      attachments: [
        {
          id: 'att3',
          label: 'dot.png',
          chars: 0,
          truncated: false,
          image: { id: 'c'.repeat(64), name: 'dot.png', mediaType: 'image/png', bytes: 70 },
        },
      ],
    });
    await p.push(streaming, { type: 'busy', conversationId: 'c1', busy: true });
    await p.page.locator('.attach-image').dispatchEvent('click');
    await collect(p, shown);
    // An empty conversation: the model's abilities and the starter prompts.
    // (No setup notice: while there is one, the empty chat offers no starters.)
    const { notice: _notice, ...usable } = rest;
    await p.push(snapshotMessage({ ...usable, messages: [], attachments: [] }), {
      type: 'busy',
      conversationId: 'c1',
      busy: false,
    });
    await p.page.locator('.starter').first().waitFor();
    await collect(p, shown);
    await p.page.screenshot({ path: path.join(SCREENSHOTS, 'chat-zh-cn.png'), fullPage: true });
    assert.ok(shown.length > 80, `only ${shown.length} texts collected`);
    // Names the answer's Markdown brings: its code blocks' languages and an image's alt text.
    const fromHost = [...hostStrings([...messages, streaming]), 'brainfuck', 'python', 'a fox', 'ts'];
    assert.deepEqual(check.problems(shown, fromHost), []);
  });

  t.it('the Media Studio shows no English of its own when VS Code speaks Chinese', async () => {
    page = await harness().open({ app: 'media', language: 'zh-cn', viewport: { width: 900, height: 1600 } });
    const p = page;
    const shown: Shown[] = [];
    await collect(p, shown); // "Loading…"
    const messages = mediaShowcase();
    await p.push(...messages);
    await p.page.locator('.size').first().fill('1024');
    await collect(p, shown);
    await p.page.locator('select[name="route"]').selectOption('responses');
    await p.page.locator('.size').first().fill('1024x1024');
    await p.page.getByRole('tab', { name: '视频' }).click();
    for (const model of ['veo-3', 'mystery-video', 'wan2.5-t2v-preview']) {
      await p.page.locator('.video-model-select').selectOption(model);
      await collect(p, shown);
    }
    await p.page.locator('input[name="videoSize"]').fill('832x480');
    await collect(p, shown);
    await p.page.locator('input[name="videoSize"]').fill('huge');
    await collect(p, shown);
    await p.page.locator('input[name="videoSize"]').fill('832*480');
    await p.page.locator('input[name="videoDuration"]').fill('2.5');
    await collect(p, shown);
    await p.page.locator('input[name="videoDuration"]').fill('5');
    await p.page.locator('textarea[name="videoPrompt"]').fill('雪中奔跑的狐狸');
    await collect(p, shown);
    await p.page.screenshot({ path: path.join(SCREENSHOTS, 'media-zh-cn.png'), fullPage: true });
    const first = messages[0];
    if (first?.type !== 'snapshot' || !first.state.imageJob)
      throw new Error('the showcase starts with a snapshot and a job');
    const { partial: _partial, ...running } = first.state.imageJob;
    for (const state of ['done', 'failed', 'cancelled'] as const) {
      const job = {
        ...running,
        state,
        finishedAt: Date.now(),
        files: state === 'done' ? ['media/fox.png'] : [],
        ...(state === 'failed' ? { message: '网关拒绝了该请求。' } : {}),
      };
      await p.push({ type: 'snapshot', state: { ...first.state, imageJob: job } });
      await collect(p, shown);
    }
    const { message: _m, ...noReason } = running;
    await p.push({
      type: 'snapshot',
      state: { ...first.state, imageJob: { ...noReason, state: 'failed', files: [] } },
    });
    await collect(p, shown);
    assert.ok(shown.length > 80, `only ${shown.length} texts collected`);
    assert.deepEqual(check.problems(shown, hostStrings(messages)), []);
  });
}
