/** The example config in docs/configuration.md is real: it parses, and its claude section is valid. */
import path from 'node:path';
import { parseConfig } from '../../src/config/config-file';
import { resolveClaudeConfig } from '../../src/claude/config';
import { resolveWorkerTuning } from '../../src/config/worker-tuning';
import { testStateDir } from '../support/settings';
import { docBlock } from '../support/doc-blocks';

it('accepts the configuration example in docs/configuration.md', () => {
  const yaml = docBlock('docs/configuration.md', 'config-example').body;
  const config = parseConfig(yaml, 'yaml', { SEARCH_TOKEN: 'tok', TENANT: 't1' }, 'docs/configuration.md', testStateDir());
  expect(config.servers.map((s) => [s.name, s.transport])).toEqual([
    ['files', 'stdio'],
    ['search', 'streamable-http'],
  ]);
  expect(config.servers[1]!.headers.Authorization).toBe('Bearer tok');
  expect(config.toolModules.map((m) => [m.name, m.path])).toEqual([['crm', path.resolve('docs/tools/crm-tools.mjs')]]);
  expect(config.toolsets).toEqual({ research: { servers: ['search', 'crm'], deny: ['crm__delete_*'], serverTools: { web_fetch: true } } });
  expect(resolveClaudeConfig(config.claude)).toMatchObject({ rateLimitPerSecond: 5, maxToolsPerRequest: 40, serverTools: { web_search: { maxUses: 5 } } });
  expect(resolveWorkerTuning(config.worker)).toEqual({ tuning: expect.objectContaining({ workflowThreadPoolSize: 1 }), problems: [] });
});
