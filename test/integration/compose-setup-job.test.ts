/**
 * docker-compose's `temporal-setup` job, run for real: its shell script, taken from
 * docker-compose.yml (compose's `$$` escapes undone), with the real temporal CLI against the test
 * dev server. There is no Docker engine here; the script is what the container would run.
 */
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { searchAttributeCliArgs } from '../../src/core/search-attributes';
import { createNamespace as createOn, runSetupJob } from '../support/compose-setup-job';

jest.setTimeout(90_000);

const address = (): string => process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const runJob = (namespace: string, waitSeconds: number): ReturnType<typeof runSetupJob> => runSetupJob(address(), namespace, waitSeconds);

const { IndexedValueType } = temporal.api.enums.v1;
/** The CLI's type names (what the job's list uses) for the API's enum values. */
const TYPE_NAMES: Record<number, string> = {
  [IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]: 'Keyword',
  [IndexedValueType.INDEXED_VALUE_TYPE_TEXT]: 'Text',
  [IndexedValueType.INDEXED_VALUE_TYPE_INT]: 'Int',
  [IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE]: 'Double',
};

describe("docker-compose's search attribute job", () => {
  let connection: Connection;
  beforeAll(async () => {
    connection = await Connection.connect({ address: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS! });
  });
  afterAll(async () => {
    await connection.close();
  });

  const uniqueNamespace = (prefix: string): string => `${prefix}-${process.pid}-${Date.now().toString(36)}`;
  const createNamespace = (namespace: string): void => createOn(address(), namespace);
  const customAttributes = async (namespace: string): Promise<string[]> => {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.entries(listed.customAttributes ?? {})
      .map(([name, type]) => `${name}=${TYPE_NAMES[type] ?? type}`)
      .sort();
  };
  const expected = searchAttributeCliArgs()
    .filter((arg) => arg !== '--search-attribute')
    .sort();

  it('waits while the namespace is not found, then registers every attribute with its type; a rerun changes nothing', async () => {
    const namespace = uniqueNamespace('setup-late');
    const job = runJob(namespace, 60);
    // The namespace appears only after the job has started asking for it.
    await new Promise((r) => setTimeout(r, 3_000));
    createNamespace(namespace);
    const run = await job;
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`waiting for namespace ${namespace}: .*Namespace ${namespace} is not found`));
    expect(run.stdout).toContain(`namespace ${namespace} on ${process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS} has all mcp-turns search attributes`);
    expect(await customAttributes(namespace)).toEqual(expected);

    const rerun = await runJob(namespace, 10);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).not.toContain('created');
    expect(await customAttributes(namespace)).toEqual(expected);
  });

  it('fails with the last error once the wait is over when the namespace never answers', async () => {
    const namespace = uniqueNamespace('setup-never');
    const run = await runJob(namespace, 4);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`temporal-setup: FAILED: namespace ${namespace} on ${process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS}: search attributes not registered after 4 s`);
    expect(run.stderr).toContain(`Namespace ${namespace} is not found`);
    expect(run.ms).toBeGreaterThanOrEqual(4_000);
    expect(run.ms).toBeLessThan(20_000);
  });

  it('fails at once, creating nothing, when an attribute exists with another type', async () => {
    const namespace = uniqueNamespace('setup-clash');
    createNamespace(namespace);
    // A new namespace may answer "not found" briefly: retry the create like an operator would.
    for (let i = 0; ; i++) {
      try {
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: { McpTurnsModel: IndexedValueType.INDEXED_VALUE_TYPE_TEXT },
        });
        break;
      } catch (err) {
        if (i >= 20) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const run = await runJob(namespace, 30);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`temporal-setup: FAILED: search attribute McpTurnsModel exists on namespace ${namespace} as Text; mcp-turns needs Keyword`);
    expect(run.stdout).not.toContain('created');
    expect(await customAttributes(namespace)).toEqual(['McpTurnsModel=Text']);
  });
});
