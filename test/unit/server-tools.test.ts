/**
 * Claude's server tools on the request side: the layers a turn's `serverTools` comes from, the API
 * definitions they become, what the schema refuses, their place in the turn's catalog and the
 * formatter's request, their usage and cost, the sources cited with them, and their stream events.
 */
import { historyServerTools, mergeServerTools, serverToolDefinitions, serverToolsCalledIn } from '../../src/core/server-tools';
import { parseChatTurnInput, type ChatTurnInput, type ChatTurnInputError } from '../../src/schemas/turn-input';
import { prepareTurnOf } from '../../src/core/turn-toolset';
import { selectTools } from '../../src/core/toolsets';
import { addUsage, fromApiUsage, serverToolCostNote, ZERO_USAGE } from '../../src/core/usage';
import { costOf } from '../../src/claude/pricing';
import { bibliographyArtifact, sourcesOf } from '../../src/core/bibliography';
import { serverToolCalls, serverToolResults } from '../../src/core/server-tool-blocks';
import type { ContentBlock, MessageParam, ToolListing } from '../../src/core/contracts';

const EMPTY_LISTING: ToolListing = { tools: [], policies: {}, unavailable: [], unknownServers: [] };

describe('serverTools', () => {
  it('layers the worker\'s, the toolset\'s and the turn\'s tool by tool; false turns one off', () => {
    expect(mergeServerTools({ web_search: { maxUses: 2 }, code_execution: true }, { web_fetch: true }, { code_execution: false })).toEqual({
      web_search: { maxUses: 2 },
      web_fetch: true,
      code_execution: false,
    });
  });

  it('becomes the API definitions, default versions unless one is named, options in snake_case', () => {
    expect(
      serverToolDefinitions({
        web_search: { maxUses: 3, allowedDomains: ['example.com'], userLocation: { type: 'approximate', country: 'NO' } },
        web_fetch: { version: 'web_fetch_20260318', citations: true, maxContentTokens: 5000 },
        code_execution: true,
      }),
    ).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['example.com'], user_location: { type: 'approximate', country: 'NO' } },
      { type: 'web_fetch_20260318', name: 'web_fetch', max_content_tokens: 5000, citations: { enabled: true } },
      { type: 'code_execution_20250825', name: 'code_execution' },
    ]);
    expect(serverToolDefinitions({ web_search: false })).toEqual([]);
  });

  it('refuses what the API refuses, naming the field', () => {
    const problems = (serverTools: unknown): string[] => {
      try {
        parseChatTurnInput({ question: 'q', serverTools });
        return [];
      } catch (err) {
        return (err as ChatTurnInputError).problems;
      }
    };
    expect(problems({ web_search: { allowedDomains: ['a.com'], blockedDomains: ['b.com'] } })).toEqual([
      'serverTools.web_search.blockedDomains: allowedDomains and blockedDomains exclude each other: give one',
    ]);
    expect(problems({ web_fetch: { userLocation: { type: 'approximate' } } })).toEqual([expect.stringMatching(/^serverTools\.web_fetch/)]);
    expect(problems({ web_search: { maxContentTokens: 10 } })).toEqual([expect.stringMatching(/^serverTools\.web_search/)]);
    expect(problems({ web_search: { version: 'web_search_1999' } })).toEqual([expect.stringMatching(/^serverTools\.web_search/)]);
    expect(problems({ computer: true })).toEqual([expect.stringMatching(/^serverTools: .*computer/)]);
  });

  it('keeps defining the server tools a prior history called that the turn does not offer', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'server_tool_use', id: 's1', name: 'bash_code_execution', input: {} }, { type: 'server_tool_use', id: 's2', name: 'web_search', input: {} }] },
    ];
    expect(serverToolsCalledIn(history)).toEqual(['web_search', 'code_execution']);
    expect(historyServerTools(history, [{ name: 'web_search' }])).toEqual([{ type: 'code_execution_20250825', name: 'code_execution' }]);
    expect(historyServerTools([{ role: 'user', content: 'q' }], [])).toEqual([]);
  });

  it('joins the turn\'s catalog after its own tools, with no target, from the worker, the toolset and the turn', () => {
    const listing: ToolListing = {
      ...EMPTY_LISTING,
      tools: [{ server: 'crm', name: 'lookup', inputSchema: { type: 'object' } }],
    };
    const input: ChatTurnInput = { question: 'q', serverTools: { code_execution: true } };
    const selection = selectTools(input, 'research', { serverTools: { web_fetch: true } });
    const prepared = prepareTurnOf(input, listing, { serverTools: { web_search: true } }, selection);
    expect(prepared.catalog.tools.map((t) => t.name)).toEqual(['crm__lookup', 'web_search', 'web_fetch', 'code_execution']);
    expect(Object.keys(prepared.catalog.targets)).toEqual(['crm__lookup']);
  });
});

describe('usage and cost', () => {
  it('counts searches and fetches from usage and code executions from the content; sums only what is there', () => {
    const content = [
      { type: 'server_tool_use', name: 'bash_code_execution' },
      { type: 'server_tool_use', name: 'web_search' },
      { type: 'text' },
    ];
    const usage = fromApiUsage({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 } }, content);
    expect(usage).toEqual({ inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, webSearchRequests: 2, webFetchRequests: 1, codeExecutions: 1 });
    expect(addUsage(ZERO_USAGE, ZERO_USAGE)).toEqual(ZERO_USAGE);
    expect(addUsage(usage, usage)).toMatchObject({ webSearchRequests: 4, webFetchRequests: 2, codeExecutions: 2 });
  });

  it('prices a web search at $0.01 beside the tokens, and says what the cost leaves out', () => {
    const tokens = { inputTokens: 1_000_000, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    expect(costOf(tokens, 'claude-sonnet-4-6').usd).toBeCloseTo(3, 6);
    expect(costOf({ ...tokens, webSearchRequests: 3 }, 'claude-sonnet-4-6').usd).toBeCloseTo(3.03, 6);
    expect(serverToolCostNote(tokens)).toBe('');
    expect(serverToolCostNote({ ...tokens, webSearchRequests: 1, codeExecutions: 2 })).toBe(' (1 web search included; code execution container time not included)');
  });
});

describe('sources and stream blocks', () => {
  const reply = [
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'temporal' } },
    {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: [{ type: 'web_search_result', url: 'https://temporal.io', title: 'Temporal', encrypted_content: 'x' }],
    },
    {
      type: 'text',
      text: 'Temporal is durable.',
      citations: [
        { type: 'web_search_result_location', url: 'https://temporal.io', title: 'Temporal', cited_text: 'durable execution', encrypted_index: 'i' },
        { type: 'web_search_result_location', url: 'https://temporal.io', title: 'Temporal', cited_text: 'durable execution', encrypted_index: 'j' },
      ],
    },
    { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_fetch', input: { url: 'https://x.dev' } },
  ] as unknown as ContentBlock[];

  it('collects each cited source once, with each quote once, into a bibliography artifact', () => {
    const messages: MessageParam[] = [{ role: 'user', content: 'q' }, { role: 'assistant', content: reply }];
    expect(sourcesOf(messages)).toEqual([{ url: 'https://temporal.io', title: 'Temporal', citedText: ['durable execution'] }]);
    expect(bibliographyArtifact(messages)).toMatchObject({ type: 'application/vnd.bibliography', title: 'Sources' });
    expect(bibliographyArtifact([{ role: 'user', content: 'q' }])).toBeUndefined();
  });

  it('reads a reply\'s server tool calls and results (a result may be missing: it comes in a later reply)', () => {
    expect(serverToolCalls(reply)).toEqual([
      { id: 'srvtoolu_1', name: 'web_search', input: { query: 'temporal' } },
      { id: 'srvtoolu_2', name: 'web_fetch', input: { url: 'https://x.dev' } },
    ]);
    expect(serverToolResults(reply)).toEqual([
      { toolUseId: 'srvtoolu_1', type: 'web_search_tool_result', isError: false, text: 'Temporal · https://temporal.io', bytes: expect.any(Number) },
    ]);
    expect(serverToolResults([{ type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'web_fetch_tool_error', error_code: 'url_not_accessible' } }] as unknown as ContentBlock[])).toEqual([
      expect.objectContaining({ isError: true, text: 'error: url_not_accessible' }),
    ]);
  });
});
