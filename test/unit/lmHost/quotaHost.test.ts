/**
 * The key's quota in the host, outside VS Code (fakeVscode.ts) against the gateway double: when the
 * watcher asks (after the models were read, after billed calls, debounced; never when turned off or
 * when the gateway lacks the endpoints), its slow timer only while the window has focus, and what the
 * status bar shows.
 */
// First: answers `vscode` for every host module imported after it.
import { setWindowFocus, statusItems, ui } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import type { RegistrySnapshot } from '../../../src/core/models/modelRegistry';
import { QUOTA_DEBOUNCE_MS, type QuotaTimers, type QuotaWatcher } from '../../../src/host/quota';
import { GatewayStatusBar } from '../../../src/host/statusBar';
import { DEMO_KEY, GatewayDouble, type QuotaEndpoints } from '../../gateway';
import { clientFor } from '../../support/client';
import { hostServices } from './hostServices';

const QUOTA_PATH = /^\/(v1\/)?dashboard\/billing\/|^\/api\/usage\/token/;

async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The watcher's timers, run by the test: a wait is over when the test says so, never by the clock
 * (the debounce decides how many reads a burst makes; a slow machine must not change that).
 */
class ManualTimers implements QuotaTimers {
  private readonly waiting = new Map<number, { fn: () => void; ms: number }>();
  private next = 0;
  /** How many waits of each length were started. */
  readonly started = new Map<number, number>();

  set(fn: () => void, ms: number): unknown {
    const handle = ++this.next;
    this.waiting.set(handle, { fn, ms });
    this.started.set(ms, (this.started.get(ms) ?? 0) + 1);
    return handle;
  }

  clear(handle: unknown): void {
    this.waiting.delete(handle as number);
  }

  /** The waits of that length still pending. */
  pending(ms: number): number {
    return [...this.waiting.values()].filter((w) => w.ms === ms).length;
  }

  /** Ends every pending wait of that length now. */
  fire(ms: number): void {
    for (const [handle, w] of [...this.waiting]) {
      if (w.ms !== ms) continue;
      this.waiting.delete(handle);
      w.fn();
    }
  }
}

/** Whether the watcher is reading the figures right now. */
function reading(watcher: QuotaWatcher): boolean {
  return (watcher as unknown as { loads: { busy: boolean } }).loads.busy;
}

function tooltipOf(item: { tooltip?: { value: string } | string }): string {
  return (typeof item.tooltip === 'string' ? item.tooltip : (item.tooltip?.value ?? '')).replace(/\\(.)/g, '$1');
}

/** What the watcher's private timer is, for the focus rule (no timer runs while the window has no focus). */
function timerOf(watcher: QuotaWatcher): unknown {
  return (watcher as unknown as { timer?: unknown }).timer;
}

describe("The key's quota in the host (watcher and status bar)", function () {
  this.timeout(60_000);
  const doubles: GatewayDouble[] = [];
  const watchers: Array<{ dispose(): void }> = [];

  async function setUp(quotaEndpoints: QuotaEndpoints = 'newApi') {
    const gw = new GatewayDouble({
      quotaEndpoints,
      keys: [{ key: DEMO_KEY, group: 'default', quotaUsd: 100, tokenQuotaUsd: 20 }],
    });
    await gw.start();
    doubles.push(gw);
    // The client calls back into the watcher after billable calls, as Services wires it.
    let billed = 0;
    const client = clientFor(gw.url, DEMO_KEY, {
      afterBillableCall: () => {
        billed++;
        host.quota.afterBilledCall();
      },
    });
    const timers = new ManualTimers();
    const host = hostServices(client.http, undefined, timers);
    watchers.push(host.quota);
    const snap = host.services.registry.snapshot as RegistrySnapshot;
    const chat = async () =>
      (
        await client.http.send({
          method: 'POST',
          url: `${gw.url}/v1/chat/completions`,
          json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'billed' }] },
        })
      ).text();
    return {
      gw,
      host,
      snap,
      chat,
      timers,
      billed: () => billed,
      reads: () => gw.log.filter((e) => QUOTA_PATH.test(e.path)),
    };
  }

  beforeEach(() => {
    ui.settings = {};
    setWindowFocus(true);
  });
  after(async () => {
    for (const w of watchers) w.dispose();
    await Promise.all(doubles.map((d) => d.stop()));
  });

  it('reads after the models were read, shows the figure in the tooltip, and in the text only when asked', async () => {
    const { host, snap, reads } = await setUp();
    const bar = new GatewayStatusBar(host.services);
    try {
      const item = statusItems.at(-1);
      assert.ok(item);
      await until('the status bar shows the key', () => item.text.includes('Gateway'));
      assert.equal(reads().length, 0, 'nothing is read before the models are');
      host.quota.modelsRead(snap);
      await until('the tooltip shows the quota', () =>
        tooltipOf(item).includes('Key quota: US$20.00 left, US$0.00 used.'),
      );
      assert.doesNotMatch(item.text, /left/);
      await until('the read is over', () => !reading(host.quota));
      host.quota.modelsRead(snap);
      assert.equal(reading(host.quota), false, 'the same model list is not a reason to read again');
      assert.equal(reads().length, 2);
      ui.settings['modelGateway.quota.show'] = 'statusBar';
      await bar.update();
      assert.match(item.text, / · US\$20\.00 left$/);
      ui.settings['modelGateway.quota.show'] = 'off';
      await bar.update();
      assert.doesNotMatch(tooltipOf(item), /Key quota/);
      assert.doesNotMatch(item.text, /left/);
    } finally {
      bar.dispose();
    }
  });

  it('reads once after a burst of billed calls, when they have paused', async () => {
    const { gw, host, snap, chat, reads, timers } = await setUp();
    host.quota.modelsRead(snap);
    await until('the first read', () => host.quota.current !== undefined && !reading(host.quota));
    gw.clearLog();
    for (let i = 0; i < 3; i++) await chat();
    await until('each call has started the wait again', () => timers.started.get(QUOTA_DEBOUNCE_MS) === 3);
    assert.equal(timers.pending(QUOTA_DEBOUNCE_MS), 1, 'one wait for the three calls');
    assert.equal(reads().length, 0, 'not during the burst');
    timers.fire(QUOTA_DEBOUNCE_MS);
    await until('the read after the pause is over', () => reads().length >= 2 && !reading(host.quota));
    assert.deepEqual(
      reads().map((e) => e.path),
      ['/v1/dashboard/billing/subscription', '/v1/dashboard/billing/usage'],
      'one read for the three calls',
    );
    const left = gw.quota(DEMO_KEY).tokenUsd ?? NaN;
    assert.ok(Math.abs((host.quota.current?.remaining ?? NaN) - left) < 1e-6, 'the new figure is kept');
  });

  it('turned off: never reads, not even after billed calls', async () => {
    const { host, snap, chat, reads, timers, billed } = await setUp();
    ui.settings['modelGateway.quota.show'] = 'off';
    host.quota.modelsRead(snap);
    await chat();
    await until('the watcher was told of the billed call', () => billed() === 1);
    assert.equal(reading(host.quota), false);
    assert.equal(timers.started.get(QUOTA_DEBOUNCE_MS), undefined, 'no read waits for the calls to pause');
    assert.equal(await host.quota.refresh(), undefined);
    assert.equal(reads().length, 0);
    assert.equal(timerOf(host.quota), undefined, 'no timer');
  });

  it('a gateway without the endpoints: one log line, no notification, no timer, no reads after billed calls', async () => {
    const { gw, host, snap, chat, reads, timers, billed } = await setUp('none');
    const shownBefore = ui.shown.length;
    host.quota.modelsRead(snap);
    await until('the read is over', () => host.logLines.some((l) => l.includes("does not tell the key's quota")));
    assert.equal(host.quota.current, undefined);
    assert.equal(timerOf(host.quota), undefined);
    gw.clearLog();
    await chat();
    await until('the watcher was told of the billed call', () => billed() === 1);
    assert.equal(timers.started.get(QUOTA_DEBOUNCE_MS), undefined, 'no read waits for the calls to pause');
    assert.equal(reading(host.quota), false);
    assert.equal(reads().length, 0, 'billed calls do not retry a gateway that lacks them');
    await host.quota.refresh();
    assert.equal(
      host.logLines.filter((l) => l.includes("does not tell the key's quota")).length,
      1,
      'the same reason is logged once',
    );
    assert.equal(ui.shown.length, shownBefore, 'nothing was shown to the user');
  });

  it('the slow timer runs only while the window has focus', async () => {
    const { host, snap } = await setUp();
    host.quota.modelsRead(snap);
    await until('the first read', () => host.quota.current !== undefined);
    assert.ok(timerOf(host.quota), 'a timer while focused and shown');
    setWindowFocus(false);
    assert.equal(timerOf(host.quota), undefined, 'no timer without focus');
    setWindowFocus(true);
    assert.ok(timerOf(host.quota), 'back with the focus (the figure is fresh, so no read)');
    host.quota.reset();
    assert.equal(timerOf(host.quota), undefined, 'a new key or gateway stops it');
    assert.equal(host.quota.current, undefined);
  });
});
