/**
 * The Media Studio webview in a real Chromium page with the host's CSP: the form in plain words (no
 * wire paths or field names, one size notation), each endpoint's own size form in what it sends,
 * task states in words, cards with the saved file's real size, and its drafts and tab restored
 * from the webview's saved state.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as T from '../../src/core/media/videoTaskStates';
import type { MediaSnapshot, MediaWebviewMessage, TaskView } from '../../src/shared/mediaProtocol';
import type { SuiteBuilder } from './chatView.webtest';
import { closeAndCheck, type ChatPage, type WebviewHarness } from './harness';

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-results', 'webview');
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** What people must not be shown: wire paths, wire field names and values, sizes in a wire form. */
const WIRE = [
  /\/v1\//,
  /\b(POST|GET)\b/,
  /\b(b64_json|response_format|image_generation|tool_choice|outer)\b/i,
  /\b\d+[x*]\d+\b/,
  /\bResponses\b/,
  /\bImages API\b/,
  /NOT_START|IN_PROGRESS|SUBMITTED|QUEUED|SUCCESS|FAILURE/,
];

function studio(extra: Partial<MediaSnapshot> = {}): MediaSnapshot {
  return {
    imageModels: [{ id: 'gpt-image-1', provider: 'openai' }],
    outerModels: [{ id: 'gpt-4.1', provider: 'openai' }],
    videoModels: [
      {
        id: 'wan2.5-t2v-preview',
        provider: 'alibaba',
        sizes: ['832*480'],
        durations: [5],
        defaultSize: '832*480',
        defaultDuration: 5,
        hintSource: 'verified',
      },
      {
        id: 'veo-3',
        provider: 'google',
        sizes: ['1280*720'],
        durations: [8],
        defaultSize: '1280*720',
        defaultDuration: 8,
        hintSource: 'catalog',
      },
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
    tasks: [],
    gallery: [],
    outputFolder: 'generated/',
    ...extra,
  };
}

/** A task as the host shows it, its status line worded by the real state machine. */
function taskView(localId: string, task: T.VideoTask, extra: Partial<TaskView> = {}): TaskView {
  return {
    localId,
    ...(task.taskId ? { taskId: task.taskId } : {}),
    model: task.model,
    prompt: task.prompt,
    size: task.size,
    duration: task.duration,
    phase: task.phase,
    ...(task.progress !== undefined ? { progress: task.progress } : {}),
    statusText: T.describeTask(task),
    createdAt: task.createdAt,
    ...(task.error ? { error: { message: task.error.message, stage: task.error.stage } } : {}),
    canCancel: false,
    canResume: false,
    canRetryDownload: false,
    canResubmit: false,
    ...extra,
  };
}

export function defineMediaTests(t: SuiteBuilder, harness: () => WebviewHarness): void {
  let page: ChatPage | undefined;
  t.afterEach(async () => {
    if (!page) return;
    const closing = page;
    page = undefined;
    await closeAndCheck(closing);
  });
  const open = async (uiState?: unknown, theme?: 'light' | 'dark'): Promise<ChatPage> => {
    page = await harness().open({
      app: 'media',
      viewport: { width: 900, height: 1400 },
      ...(uiState ? { uiState } : {}),
      ...(theme ? { theme } : {}),
    });
    return page;
  };
  const wireWords = async (p: ChatPage): Promise<string[]> => {
    const shown = await p.probe<Array<{ where: string; text: string }>>('shownWords');
    return shown.filter((s) => WIRE.some((w) => w.test(s.text))).map((s) => `${s.where}: ${s.text}`);
  };

  t.it(
    'speaks plainly in the form: no wire paths or field names, sizes as W × H, labels and tooltips too',
    async () => {
      const p = await open();
      await p.push({ type: 'snapshot', state: studio() });
      const found: string[] = [];
      found.push(...(await wireWords(p)));
      assert.equal(
        await p.page.locator('#panel-images input.size').inputValue(),
        '1024 × 1024',
        "the setting's 1024x1024 is shown in the studio's notation",
      );
      await p.page.locator('select[name="route"]').selectOption('responses');
      found.push(...(await wireWords(p)));
      await p.page.getByRole('tab', { name: 'Video' }).click();
      for (const model of ['veo-3', 'mystery-video', 'wan2.5-t2v-preview']) {
        await p.page.locator('.video-model-select').selectOption(model);
        found.push(...(await wireWords(p)));
      }
      assert.equal(await p.page.locator('#panel-video input.size').inputValue(), '832 × 480');
      await p.page.locator('textarea[name="videoPrompt"]').fill('a fox');
      await p.page.locator('.billing', { hasText: '832 × 480 (480P)' }).waitFor();
      const sizeOptions = await p.page
        .locator('#video-sizes option')
        .evaluateAll((els) => els.map((e) => e.getAttribute('value')));
      assert.deepEqual(sizeOptions, ['832 × 480']);
      found.push(...(await wireWords(p)));
      assert.deepEqual(found, []);
    },
  );

  t.it('accepts any notation and sends each endpoint its own: 1536x1024 to images, 832*480 to video', async () => {
    const p = await open();
    await p.push({ type: 'snapshot', state: studio() });
    const images = p.page.locator('#panel-images');
    await images.locator('textarea.prompt').fill('a red fox');
    for (const [typed, sent] of [
      ['1536 × 1024', '1536x1024'],
      ['1024*1536', '1024x1536'],
    ] as const) {
      await images.locator('input.size').fill(typed);
      assert.equal(await images.locator('.problem').innerText(), '');
      await p.clearPosted();
      await images.getByRole('button', { name: 'Generate the image' }).click();
      const posted = (await p.posted()) as unknown as MediaWebviewMessage[];
      const request = posted.find((m) => m.type === 'generateImage');
      assert.equal(request?.type === 'generateImage' ? request.request.size : undefined, sent, typed);
      await p.push({ type: 'snapshot', state: studio() });
    }
    await images.locator('input.size').fill('big');
    await images
      .locator('.problem', { hasText: 'Write the size as width × height in pixels, e.g. 1024 × 1024.' })
      .waitFor();
    assert.equal(await images.getByRole('button', { name: 'Generate the image' }).isDisabled(), true);

    await p.page.getByRole('tab', { name: 'Video' }).click();
    const video = p.page.locator('#panel-video');
    await video.locator('textarea.prompt').fill('a fox runs');
    await video.locator('input.size').fill('832x480');
    assert.equal(await video.locator('.problem').innerText(), '', 'an x is as good as a ×');
    await p.clearPosted();
    await video.getByRole('button', { name: 'Submit the video task (billed)' }).click();
    const posted = (await p.posted()) as unknown as MediaWebviewMessage[];
    const submit = posted.find((m) => m.type === 'submitVideo');
    assert.deepEqual(submit?.type === 'submitVideo' ? submit.request : undefined, {
      model: 'wan2.5-t2v-preview',
      prompt: 'a fox runs',
      size: '832*480',
      duration: 5,
    });
  });

  t.it('shows task states in words and cards with the real size of the saved file', async () => {
    const p = await open({ tab: 'video', fields: {} });
    const policy: T.PollPolicy = { baseMs: 15_000, maxPollMs: 0, maxErrors: 3 };
    const t0 = Date.now() - 60_000;
    const params = { model: 'wan2.5-t2v-preview', prompt: 'a fox', size: '832*480', duration: 5, outputDir: '/tmp' };
    const accepted = T.accepted(T.createTask(params, 'l', t0), 'task_1', t0, policy);
    const status = (s: Parameters<typeof T.observed>[1]) => T.observed(accepted, s, t0 + 5000, policy);
    const generating = status({ status: 'IN_PROGRESS', rawStatus: 'IN_PROGRESS', progress: 40 });
    const downloading = status({
      status: 'SUCCESS',
      rawStatus: 'SUCCESS',
      progress: 100,
      videoUrl: 'https://cdn.example.test/v.mp4',
    });
    const tasks = [
      taskView('queued', { ...accepted, prompt: 'queued fox' }),
      taskView('generating', { ...generating, prompt: 'generating fox' }),
      taskView(
        'done',
        { ...T.downloaded(downloading, '/tmp/v.mp4', t0 + 9000), prompt: 'done fox' },
        { file: { path: '/tmp/v.mp4', label: 'generated/videos/v.mp4' } },
      ),
      // As the host words a failure: the badge says only "Failed", the reason is in the paragraph.
      taskView(
        'failed',
        {
          ...status({
            status: 'FAILURE',
            rawStatus: 'FAILURE',
            progress: 100,
            failReason: 'DataInspectionFailed: inappropriate content.',
          }),
          prompt: 'failed fox',
        },
        {
          canResubmit: true,
          statusText: 'Failed',
          billing: 'Billing: the gateway charged this task when it accepted it and may refund it now that it failed.',
        },
      ),
    ];
    const started = Date.now();
    const gallery: MediaSnapshot['gallery'] = [
      {
        id: 'g1',
        kind: 'image',
        prompt: 'small fox',
        model: 'gpt-image-1',
        size: '1024x1024',
        pixels: { width: 48, height: 48 },
        createdAt: started,
        label: 'generated/images/small.png',
        src: `data:image/png;base64,${PNG_1X1}`,
        exists: true,
      },
      {
        id: 'g2',
        kind: 'image',
        prompt: 'exact fox',
        model: 'gpt-image-1',
        size: '1536x1024',
        pixels: { width: 1536, height: 1024 },
        createdAt: started,
        label: 'generated/images/exact.png',
        src: `data:image/png;base64,${PNG_1X1}`,
        exists: true,
      },
      {
        id: 'g3',
        kind: 'image',
        prompt: 'odd fox',
        model: 'gpt-image-1',
        size: '1024x1024',
        pixels: null,
        createdAt: started,
        label: 'generated/images/odd.png',
        exists: true,
      },
      {
        id: 'g4',
        kind: 'video',
        prompt: 'video fox',
        model: 'wan2.5-t2v-preview',
        size: '832*480',
        pixels: { width: 832, height: 480 },
        createdAt: started,
        label: 'generated/videos/v.mp4',
        exists: true,
      },
    ];
    await p.push({ type: 'snapshot', state: studio({ tasks, gallery }) });
    const badge = (id: string) =>
      p.page.locator(`#panel-video .task:has(.task-prompt:text-is("${id} fox")) .badge`).innerText();
    assert.equal(await badge('queued'), 'Queued');
    assert.equal(await badge('generating'), 'Generating 40 %');
    assert.equal(await badge('done'), 'Done');
    assert.equal(await badge('failed'), 'Failed');
    const failed = p.page.locator('#panel-video .task:has(.task-prompt:text-is("failed fox"))');
    assert.equal(
      (await failed.innerText()).split('inappropriate content').length - 1,
      1,
      'the upstream words are said once',
    );
    assert.equal(
      await failed.locator('progress').evaluate((el) => (el as unknown as { value: number }).value),
      0,
      'a failed task never shows a full bar',
    );
    assert.match(await failed.locator('.billing-note').innerText(), /^Billing: /);
    const meta = await p.page.locator('#panel-video .task .meta').allInnerTexts();
    assert.ok(
      meta.every((m) => m.includes('832 × 480')),
      meta.join('\n'),
    );
    assert.ok(
      meta.every((m) => / · video length 5 s · (elapsed|took) \d+ (s|min|h)\b/.test(m)),
      meta.join('\n'),
    );
    // Gallery cards: Open and a menu for the rest.
    assert.equal(await p.page.locator('#panel-video .card button.more-toggle').getAttribute('aria-haspopup'), 'menu');
    assert.equal(await p.page.locator('#panel-video .card .dimensions').innerText(), '832 × 480');
    await p.page.screenshot({ path: path.join(SCREENSHOTS, 'media-tasks.png'), fullPage: true });

    await p.page.getByRole('tab', { name: 'Images' }).click();
    const dims = await p.page.locator('#panel-images .card .dimensions').allInnerTexts();
    assert.deepEqual(dims, ['48 × 48 (asked for 1024 × 1024)', '1536 × 1024', 'size unknown']);
    assert.deepEqual(await wireWords(p), []);
    await p.page.screenshot({ path: path.join(SCREENSHOTS, 'media-cards.png'), fullPage: true });
  });

  t.it('the Done badge is the same accent in Light Modern and Dark Modern, white on blue', async () => {
    const t0 = Date.now() - 60_000;
    const params = { model: 'wan2.5-t2v-preview', prompt: 'a fox', size: '832*480', duration: 5, outputDir: '/tmp' };
    const policy: T.PollPolicy = { baseMs: 15_000, maxPollMs: 0, maxErrors: 3 };
    const accepted = T.accepted(T.createTask(params, 'l', t0), 'task_1', t0, policy);
    const done = T.downloaded(accepted, '/tmp/v.mp4', t0 + 9000);
    const colours: string[][] = [];
    for (const theme of ['light', 'dark'] as const) {
      const p = await open({ tab: 'video', fields: {} }, theme);
      await p.push({ type: 'snapshot', state: studio({ tasks: [taskView('done', done)] }) });
      const badge = p.page.locator('#panel-video .task .badge', { hasText: /^Done$/ });
      colours.push(
        await badge.evaluate((el) => {
          const style = getComputedStyle(el);
          return [style.color, style.backgroundColor];
        }),
      );
      await p.page.screenshot({ path: path.join(SCREENSHOTS, `media-done-${theme}.png`) });
      await closeAndCheck(p);
      page = undefined;
    }
    // Light Modern's and Dark Modern's accents (#005fb8, #0078d4): a blue in both, not a grey in one.
    assert.deepEqual(colours, [
      ['rgb(255, 255, 255)', 'rgb(0, 95, 184)'],
      ['rgb(255, 255, 255)', 'rgb(0, 120, 212)'],
    ]);
  });

  t.it('comes back with its tab and drafts from the saved state, sizes in its own notation', async () => {
    const p = await open({
      tab: 'video',
      fields: {
        videoPrompt: 'a fox at dusk',
        videoSize: '1280*720',
        videoDuration: '8',
        videoModel: 'veo-3',
        imageSize: '512x512',
        imagePrompt: 'a cat',
      },
    });
    await p.push({ type: 'snapshot', state: studio() });
    assert.equal(await p.page.locator('#tab-video').getAttribute('aria-selected'), 'true');
    assert.equal(await p.page.locator('#panel-video').isVisible(), true);
    assert.equal(await p.page.locator('textarea[name="videoPrompt"]').inputValue(), 'a fox at dusk');
    assert.equal(await p.page.locator('.video-model-select').inputValue(), 'veo-3');
    assert.equal(await p.page.locator('#panel-video input.size').inputValue(), '1280 × 720');
    assert.equal(await p.page.locator('textarea[name="imagePrompt"]').inputValue(), 'a cat');
    assert.equal(await p.page.locator('#panel-images input.size').inputValue(), '512 × 512');
    await p.page.getByRole('tab', { name: 'Images' }).click();
    await p.waitFor(`window.__probe.state && window.__probe.state.tab === 'images'`);
  });
}
