// Injected into the test page before any page script (Playwright init script, so the page's CSP does
// not apply to it). Plain JavaScript on purpose: the repository's Node tsconfig has no DOM types.
// It stands in for VS Code's webview host (acquireVsCodeApi) and records what a test asserts on.
(() => {
  const seed = typeof __PROBE_SEED__ === 'undefined' ? {} : __PROBE_SEED__;
  const probe = {
    posted: [],
    state: seed.uiState,
    alerts: [],
    violations: [],
    errors: [],
    longTasks: [],
    mutations: 0,
  };
  window.__probe = probe;
  // The app records a User Timing measure per render (see chatApp.ts); the probe sees each one as it
  // is made (performance.measure returns the entry), so nothing waits for an observer's callback.
  const perf = { renders: 0, totalMs: 0, maxMs: 0, samples: [] };
  const measure = performance.measure.bind(performance);
  performance.measure = (...args) => {
    const entry = measure(...args);
    if (entry && entry.name === 'chat-render') {
      perf.renders++;
      perf.totalMs += entry.duration;
      perf.maxMs = Math.max(perf.maxMs, entry.duration);
      perf.samples.push(entry.duration);
    }
    return entry;
  };
  window.__chatPerf = perf;

  let acquired = false;
  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error('acquireVsCodeApi may only be called once');
    acquired = true;
    return {
      postMessage: (message) => probe.posted.push(JSON.parse(JSON.stringify(message))),
      getState: () => probe.state,
      setState: (state) => {
        probe.state = JSON.parse(JSON.stringify(state));
      },
    };
  };

  // Anything that gets to run a dialog is an XSS.
  for (const name of ['alert', 'confirm', 'prompt', 'print']) {
    window[name] = (...args) => {
      probe.alerts.push(`${name}(${args.map(String).join(', ')})`);
    };
  }
  document.addEventListener('securitypolicyviolation', (event) => {
    probe.violations.push({ directive: event.violatedDirective, blocked: event.blockedURI, sample: event.sample });
  });
  window.addEventListener('error', (event) => probe.errors.push(String(event.message)));
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) probe.longTasks.push(entry.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    // Long-task timing is not available: the numbers are reported as 0.
  }

  /**
   * Every piece of text the page shows or reads out (text nodes, hidden ones too, and the title,
   * aria-label, placeholder, alt and optgroup label attributes), with where it is. What the app
   * renders from Markdown or a message's text is content, not the app's words, so it is left out,
   * except the controls the app adds inside it (code toolbars, held-back remote images).
   */
  probe.shownWords = () => {
    const out = [];
    const isContent = (el) =>
      Boolean(el.closest('.md, .user-text')) && !el.closest('.code-toolbar button, .remote-image, .image-alt');
    const where = (el) =>
      el.tagName.toLowerCase() +
      (typeof el.className === 'string' && el.className.trim() ? `.${el.className.trim().split(/\s+/).join('.')}` : '');
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      const text = (node.textContent || '').trim();
      if (!el || !text || isContent(el) || el.closest('script, style')) continue;
      out.push({ where: where(el), text });
    }
    for (const el of document.body.querySelectorAll('[title], [aria-label], [placeholder], [alt], optgroup[label]')) {
      if (isContent(el)) continue;
      for (const name of ['title', 'aria-label', 'placeholder', 'alt', 'label']) {
        const value = (el.getAttribute(name) || '').trim();
        if (value && (name !== 'label' || el.tagName === 'OPTGROUP'))
          out.push({ where: `${where(el)}[${name}]`, text: value });
      }
    }
    return out;
  };

  /**
   * Delivers a host message the way VS Code does: posted to the window (structured clone), so the
   * page reads it in a task of its own, a `message` event. Resolves once the app has handled it
   * (this listener comes after the app's).
   */
  probe.push = (message) =>
    new Promise((resolve) => {
      const handled = () => {
        window.removeEventListener('message', handled);
        resolve();
      };
      window.addEventListener('message', handled);
      window.postMessage(message, '*');
    });
  probe.frames = (count = 2) =>
    new Promise((resolve) => {
      const step = (left) => (left === 0 ? resolve() : requestAnimationFrame(() => step(left - 1)));
      step(count);
    });
  const normalise = (text) => text.replace(/\s+/g, ' ').trim();
  /** Visible text of a message's rendered answer, without the code-block toolbars. */
  probe.answerText = (messageId) => {
    const body = document.querySelector(`.msg[data-id="${CSS.escape(messageId)}"] .msg-body`);
    if (!body) return undefined;
    const clone = body.cloneNode(true);
    for (const toolbar of clone.querySelectorAll('.code-toolbar')) toolbar.remove();
    return normalise(clone.textContent);
  };
  /** Text of an HTML string parsed inertly (DOMParser runs nothing and loads nothing). */
  probe.htmlText = (html) => normalise(new DOMParser().parseFromString(html, 'text/html').body.textContent);

  /** Remembers an element and counts mutations inside it from now on. */
  probe.watch = (selector) => {
    const el = document.querySelector(selector);
    if (!el) return false;
    probe.watched = el;
    probe.mutations = 0;
    new MutationObserver((records) => {
      probe.mutations += records.length;
    }).observe(el, { subtree: true, childList: true, characterData: true, attributes: true });
    return true;
  };
  probe.watchedStillFirst = (selector) =>
    probe.watched !== undefined && probe.watched.isConnected && document.querySelector(selector) === probe.watched;

  /**
   * Streams `markdown` into message `messageId` as `deltaSize`-character appends, one host message
   * per task (as VS Code delivers them), and reports how the page coped.
   */
  probe.stream = async ({ messageId, markdown, deltaSize, from = 0 }) => {
    const perf = window.__chatPerf;
    perf.renders = 0;
    perf.totalMs = 0;
    perf.maxMs = 0;
    perf.samples = [];
    probe.longTasks.length = 0;
    const frameGaps = [];
    let lastFrame = performance.now();
    let running = true;
    const onFrame = (time) => {
      frameGaps.push(time - lastFrame);
      lastFrame = time;
      if (running) requestAnimationFrame(onFrame);
    };
    requestAnimationFrame(onFrame);

    const started = performance.now();
    let offset = from;
    let deltas = 0;
    await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        const text = markdown.slice(offset, offset + deltaSize);
        // In this task (one per delta): what VS Code's delivery would do in a task of its own.
        window.dispatchEvent(
          new MessageEvent('message', {
            data: { type: 'append', messageId, textFrom: offset, text, reasoningFrom: 0, reasoning: '' },
          }),
        );
        offset += text.length;
        deltas++;
        if (offset < markdown.length) {
          channel.port2.postMessage(0);
        } else {
          channel.port1.close();
          resolve();
        }
      };
      channel.port2.postMessage(0);
    });
    const fed = performance.now();
    await probe.frames(2);
    running = false;
    const finished = performance.now();
    // Let the long-task observer deliver the last entries.
    await new Promise((resolve) => setTimeout(resolve, 50));
    frameGaps.sort((a, b) => a - b);
    const round = (n) => Math.round(n * 10) / 10;
    // Flat cost: renders near the end of a long answer should cost about what early ones did.
    const tenth = Math.max(1, Math.floor(perf.samples.length / 10));
    const mean = (list) => (list.length ? list.reduce((a, b) => a + b, 0) / list.length : 0);
    // The very first render also pays for warming up the JIT; leave it out of the early tenth.
    const early = perf.samples.slice(1, tenth + 1);
    const late = perf.samples.slice(-tenth);
    return {
      chars: markdown.length - from,
      deltas,
      feedMs: round(fed - started),
      totalMs: round(finished - started),
      renders: perf.renders,
      renderTotalMs: round(perf.totalMs),
      renderMaxMs: round(perf.maxMs),
      renderEarlyMeanMs: round(mean(early)),
      renderLateMeanMs: round(mean(late)),
      frames: frameGaps.length,
      frameGapP95Ms: round(frameGaps[Math.floor(frameGaps.length * 0.95)] ?? 0),
      frameGapMaxMs: round(frameGaps[frameGaps.length - 1] ?? 0),
      longTasks: probe.longTasks.length,
      longestTaskMs: round(Math.max(0, ...probe.longTasks)),
    };
  };
})();
