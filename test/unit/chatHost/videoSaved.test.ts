import * as assert from 'node:assert/strict';
// First: answers `vscode` for every host module imported after it.
import { ui } from './fakeVscode';
import type { VideoTask } from '../../../src/core/media/videoTaskStates';
import { VideoActions, type VideoActionsHost } from '../../../src/host/media/videoActions';

/** A finished video is told once, where the user looks: the studio's row when it is on screen, else a notification. */
describe('video saved notification', () => {
  const added: unknown[] = [];
  const host = (showing: boolean) =>
    ({
      gallery: { add: async (items: unknown[]) => void added.push(...items) },
      isShowing: () => showing,
    }) as unknown as VideoActionsHost;
  const task = {
    localId: 'l1',
    taskId: 'video_1',
    model: 'sora-2',
    prompt: 'a cat',
    size: '1280x720',
    duration: 4,
    phase: 'succeeded',
    file: '/nowhere/a-cat.mp4',
    createdAt: 1,
    finishedAt: 2,
  } as unknown as VideoTask;

  beforeEach(() => {
    ui.shown = [];
    ui.choices = [];
    added.length = 0;
  });

  it('adds the video to the gallery without a toast while the studio is on screen', async () => {
    await new VideoActions(host(true)).onTaskTransition(task, 'running');
    assert.equal(added.length, 1);
    assert.deepEqual(ui.shown, []);
  });

  it('tells the user with a notification when the studio is not on screen', async () => {
    await new VideoActions(host(false)).onTaskTransition(task, 'running');
    assert.equal(added.length, 1);
    assert.equal(ui.shown.length, 1);
    assert.match(ui.shown[0]!.message, /^Video saved: /);
  });
});
