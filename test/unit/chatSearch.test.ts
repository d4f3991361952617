import * as assert from 'node:assert/strict';
import { collectChat, eventsFromBytes, streamChat, type ChatResult } from '../../src/core/chat/chat';
import type { ChatEvent, ChatRequest } from '../../src/core/chat/events';
import type { ResponsesExtras } from '../../src/core/chat/responsesRequest';
import type { ChatProtocol } from '../../src/core/models/types';
import { DEMO_KEY } from '../gateway';
import { searchSources } from '../gateway/chatScenarios';
import { useDoubleClient } from '../support/client';

const PROMPT = 'Who won the regatta?';

describe('web search on every protocol against the gateway double', function () {
  const double = useDoubleClient();

  async function chat(
    protocol: ChatProtocol,
    stream: boolean,
    extra: Partial<ChatRequest> = {},
    extras?: ResponsesExtras,
  ): Promise<{ result: ChatResult; events: ChatEvent[]; body: Record<string, unknown> }> {
    const events: ChatEvent[] = [];
    const request: ChatRequest = {
      model: 'gpt-4o-mini',
      protocol,
      stream,
      messages: [{ role: 'user', content: PROMPT }],
      ...extra,
    };
    for await (const e of streamChat(double.http, request, extras)) events.push(e);
    const result = await collectChat(
      (async function* () {
        yield* events;
      })(),
    );
    return { result, events, body: JSON.parse(double.gw.log.at(-1)?.bodyText ?? '{}') as Record<string, unknown> };
  }

  for (const stream of [true, false]) {
    it(`Responses${stream ? ', streamed' : ''}: the switch adds the web_search tool; the search and its url_citation sources come back`, async () => {
      const { result, events, body } = await chat('responses', stream, { enableSearch: true });
      assert.equal(result.error, undefined, result.error?.message);
      assert.deepEqual(body.tools, [{ type: 'web_search' }]);
      assert.equal(body.enable_search, undefined, 'not the Chat Completions switch');
      const expected = searchSources(PROMPT);
      assert.deepEqual(
        result.citations,
        expected.map((s) => ({ url: s.url, title: s.title })),
      );
      assert.deepEqual(result.searches, [{ queries: [PROMPT], sources: [] }]);
      for (const s of expected) assert.ok(result.text.includes(s.title), s.title);
      assert.ok(result.text.startsWith(`Echo from gpt-4o-mini: ${PROMPT}`));
      // The search is reported before the text that cites it.
      assert.ok(events.findIndex((e) => e.type === 'webSearch') < events.findIndex((e) => e.type === 'citation'));
    });
  }

  it('Responses: the streamed events are the ones the protocol defines, and the citation spans point at the titles', async () => {
    const res = await fetch(`${double.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        input: PROMPT,
        stream: true,
        tools: [{ type: 'web_search' }],
        include: ['web_search_call.action.sources'],
      }),
    });
    const events = (await res.text())
      .split('\n\n')
      .filter((f) => f.startsWith('event:'))
      .map((f) => JSON.parse(f.split('\ndata: ')[1] ?? '{}') as Record<string, unknown>);
    const types = events.map((e) => e.type);
    const at = (t: string) => types.indexOf(t);
    assert.ok(at('response.web_search_call.in_progress') > at('response.output_item.added'));
    assert.ok(at('response.web_search_call.searching') > at('response.web_search_call.in_progress'));
    assert.ok(at('response.web_search_call.completed') > at('response.web_search_call.searching'));
    const searchDone = events.find(
      (e) => e.type === 'response.output_item.done' && (e.item as { type?: string }).type === 'web_search_call',
    );
    assert.deepEqual((searchDone?.item as { action?: unknown }).action, {
      type: 'search',
      query: PROMPT,
      queries: [PROMPT],
      sources: searchSources(PROMPT).map((s) => ({ type: 'url', url: s.url })),
    });
    const done = events.find((e) => e.type === 'response.output_text.done') as { text: string };
    const annotations = events
      .filter((e) => e.type === 'response.output_text.annotation.added')
      .map((e) => e.annotation as { start_index: number; end_index: number; title: string; type: string });
    assert.equal(annotations.length, 2);
    for (const a of annotations) {
      assert.equal(a.type, 'url_citation');
      assert.equal(done.text.slice(a.start_index, a.end_index), a.title);
    }
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
  });

  it('Responses: sources a search read but did not cite are reported with the search (include action.sources)', async () => {
    const r = collectChat(
      eventsFromBytes(
        'responses',
        (async function* () {
          yield new TextEncoder().encode(
            'event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","queries":["a","b"],"sources":[{"type":"url","url":"https://x.example/1"}]}}}\n\n' +
              'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"see x"}\n\n' +
              'event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":1,"item":{"id":"m","type":"message","content":[{"type":"output_text","text":"see x","annotations":[{"type":"url_citation","url":"https://x.example/1","title":"X","start_index":4,"end_index":5},{"type":"url_citation","url":"https://x.example/1","title":"X","start_index":4,"end_index":5}]}]}}\n\n' +
              'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","output":[]}}\n\n',
          );
        })(),
      ),
    );
    const result = await r;
    assert.deepEqual(result.searches, [{ queries: ['a', 'b'], sources: ['https://x.example/1'] }]);
    assert.deepEqual(
      result.citations,
      [{ url: 'https://x.example/1', title: 'X' }],
      'annotations only in the finished item are read, once',
    );
  });

  it('Responses: the search tool goes next to other tools (image generation), once', async () => {
    const image = { type: 'image_generation', action: 'generate', model: 'gpt-image-1' };
    const { body } = await chat('responses', true, { enableSearch: true }, { tools: [image] });
    assert.deepEqual(body.tools, [image, { type: 'web_search' }]);
    const { body: again } = await chat(
      'responses',
      true,
      { enableSearch: true },
      { tools: [{ type: 'web_search_preview' }] },
    );
    assert.deepEqual(again.tools, [{ type: 'web_search_preview' }]);
  });

  it('Responses without the switch: no tool, no search, no sources', async () => {
    const { result, body } = await chat('responses', true);
    assert.equal(body.tools, undefined);
    assert.deepEqual(result.citations, []);
    assert.deepEqual(result.searches, []);
    assert.equal(result.text, `Echo from gpt-4o-mini: ${PROMPT}`);
  });

  it('Chat Completions: enable_search in the body; the third provider searches (and compatible mode returns no sources)', async () => {
    const { result, body } = await chat('chatCompletions', true, { model: 'qwen-plus', enableSearch: true });
    assert.equal(body.enable_search, true);
    assert.equal(body.tools, undefined);
    assert.match(result.text, /I searched the web for "Who won the regatta\?"/);
    assert.deepEqual(result.citations, []);
    const off = await chat('chatCompletions', true, { model: 'qwen-plus' });
    assert.equal(off.body.enable_search, undefined);
    assert.doesNotMatch(off.result.text, /searched/);
  });

  it('Messages has no search form: the switch sends nothing', async () => {
    const { body, result } = await chat('messages', true, { model: 'claude-sonnet-4-5', enableSearch: true });
    assert.equal(body.tools, undefined);
    assert.equal(body.enable_search, undefined);
    assert.equal(result.error, undefined);
  });

  it('reads url_citation annotations on Chat Completions and web search citations on Messages, merged by URL', async () => {
    const decode = async (protocol: ChatProtocol, text: string) =>
      collectChat(
        eventsFromBytes(
          protocol,
          (async function* () {
            yield new TextEncoder().encode(text);
          })(),
        ),
      );
    const cc = await decode(
      'chatCompletions',
      'data: {"choices":[{"index":0,"delta":{"content":"Per [a]."}}]}\n\n' +
        'data: {"choices":[{"index":0,"delta":{"annotations":[{"type":"url_citation","url_citation":{"url":"https://a.example/","title":"A","start_index":4,"end_index":7}},{"type":"url_citation","url_citation":{"url":"https://a.example/","title":"A","start_index":4,"end_index":7}}]},"finish_reason":"stop"}]}\n\n' +
        'data: [DONE]\n\n',
    );
    assert.deepEqual(cc.citations, [{ url: 'https://a.example/', title: 'A' }]);
    const msg = await decode(
      'messages',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Per B."}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://b.example/","title":"B","cited_text":"..."}}}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\n\n' +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    );
    assert.deepEqual(msg.citations, [{ url: 'https://b.example/', title: 'B' }]);
  });
});
