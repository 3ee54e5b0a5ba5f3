import type { ToolListing } from '../../src/core/contracts';
import { prepareTurnOf } from '../../src/core/turn-toolset';

const listing: ToolListing = {
  tools: [
    { server: 'files', name: 'read_file', inputSchema: { type: 'object' } },
    { server: 'files', name: 'write_file', inputSchema: { type: 'object' }, approval: { timeoutMs: 60_000 } },
    { server: 'web', name: 'fetch', inputSchema: { type: 'object' } },
    { server: 'web', name: 'post', inputSchema: { type: 'object' } },
  ],
  policies: {},
  unavailable: [],
  unknownServers: ['nowhere'],
  unusableTools: [{ server: 'web', name: 'broken', reason: 'its input schema is not an object' }],
};

it('decides the tools offered, what each name calls, those left out and why, and each tool\'s approval', () => {
  const prepared = prepareTurnOf(
    {
      question: 'q',
      tools: { deny: ['web__post'] },
      maxToolsPerRequest: 2,
      toolSearch: 'off',
      approval: { tools: ['files__*', 'fetch'], timeoutMs: 10_000 },
    },
    listing,
    { model: 'worker-model' },
  );
  expect(prepared.catalog.tools.map((t) => t.name)).toEqual(['files__read_file', 'files__write_file']);
  expect(prepared.catalog.targets).toEqual({
    files__read_file: { server: 'files', tool: 'read_file' },
    files__write_file: { server: 'files', tool: 'write_file' },
  });
  expect(prepared.catalog.dropped).toEqual([
    { name: 'web__post', reason: 'in tools.deny' },
    { name: 'web__fetch', reason: 'over maxToolsPerRequest (2)' },
    { name: 'web__broken', reason: 'its input schema is not an object' },
  ]);
  // The worker's requirement and the turn's merge to the stricter (shorter) timeout; tools not offered have none.
  expect(prepared.approvals).toEqual({ files__read_file: { timeoutMs: 10_000 }, files__write_file: { timeoutMs: 10_000 } });
  expect(prepared).toMatchObject({ unknownServers: ['nowhere'], workerDefaults: { model: 'worker-model' } });
});

it('keeps the worker\'s approval when the turn adds none', () => {
  const prepared = prepareTurnOf({ question: 'q' }, listing, {});
  expect(prepared.approvals).toEqual({ files__write_file: { timeoutMs: 60_000 } });
  expect(prepared.catalog.tools).toHaveLength(4);
});

it("offers as many tools as the worker's maxToolsPerRequest when the turn sets none; a turn's own wins", () => {
  const many: ToolListing = {
    ...listing,
    tools: Array.from({ length: 30 }, (_, i) => ({ server: 'many', name: `tool_${i}`, inputSchema: { type: 'object' as const } })),
    unusableTools: [],
  };
  const loaded = (input: Parameters<typeof prepareTurnOf>[0], defaults: Parameters<typeof prepareTurnOf>[2]): number =>
    prepareTurnOf(input, many, defaults).catalog.tools.filter((t) => !('type' in t && t.type) && !t.defer_loading).length;
  expect(loaded({ question: 'q' }, {})).toBe(15);
  expect(loaded({ question: 'q' }, { maxToolsPerRequest: 20 })).toBe(20);
  expect(loaded({ question: 'q', maxToolsPerRequest: 3 }, { maxToolsPerRequest: 20 })).toBe(3);
});

it('defers the tools over maxToolsPerRequest with a tool search tool (regex for auto, bm25), loads alwaysLoad first, and drops them with off', () => {
  const many: ToolListing = {
    ...listing,
    tools: Array.from({ length: 40 }, (_, i) => ({ server: 'many', name: `tool_${i}`, inputSchema: { type: 'object' as const } })),
    unusableTools: [],
  };
  const auto = prepareTurnOf({ question: 'q', maxToolsPerRequest: 5, alwaysLoad: ['tool_37'] }, many, {});
  const names = auto.catalog.tools.map((t) => t.name);
  expect(names.slice(0, 5)).toEqual(['many__tool_37', 'many__tool_0', 'many__tool_1', 'many__tool_2', 'many__tool_3']);
  expect(auto.catalog.tools.slice(0, 5).every((t) => !('defer_loading' in t))).toBe(true);
  expect(auto.catalog.tools.slice(5, 40).every((t) => 'defer_loading' in t && t.defer_loading === true)).toBe(true);
  expect(auto.catalog.deferred).toHaveLength(35);
  expect(auto.catalog.tools.at(-1)).toEqual({ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' });
  expect(Object.keys(auto.catalog.targets)).toHaveLength(40);
  expect(auto.catalog.dropped).toEqual([]);

  const bm25 = prepareTurnOf({ question: 'q', maxToolsPerRequest: 5 }, many, { toolSearch: 'bm25' });
  expect(bm25.catalog.tools.at(-1)).toEqual({ type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' });

  const off = prepareTurnOf({ question: 'q', maxToolsPerRequest: 5, toolSearch: 'off' }, many, { toolSearch: 'bm25' });
  expect(off.catalog.tools).toHaveLength(5);
  expect(off.catalog.deferred).toBeUndefined();
  expect(off.catalog.dropped).toHaveLength(35);

  // Within the limit, nothing is deferred and no search tool is sent.
  expect(prepareTurnOf({ question: 'q' }, listing, {}).catalog.tools.map((t) => t.name)).not.toContain('tool_search_tool_regex');
});
