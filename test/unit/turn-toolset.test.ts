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
    { name: 'web__fetch', reason: 'over maxToolsPerRequest (2)' },
    { name: 'web__post', reason: 'in tools.deny' },
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
  expect(prepareTurnOf({ question: 'q' }, many, {}).catalog.tools).toHaveLength(15);
  expect(prepareTurnOf({ question: 'q' }, many, { maxToolsPerRequest: 20 }).catalog.tools).toHaveLength(20);
  expect(prepareTurnOf({ question: 'q', maxToolsPerRequest: 3 }, many, { maxToolsPerRequest: 20 }).catalog.tools).toHaveLength(3);
});
