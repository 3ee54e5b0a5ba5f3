import type { Client } from '@temporalio/client';
import { SEARCH_ATTRIBUTES, searchAttributeCreateArgs } from '../core/search-attributes';
import { DEFAULT_ADDRESS } from '../temporal/connection';
import { causeChain } from '../client/describe-failure';
import { CliError } from './cli-error';
import { missingSearchAttribute } from '../client/missing-search-attribute';
import { unlistedSearchAttributes } from '../temporal/search-attribute-registration';


/**
 * The command that registers mcp-turns' search attributes when `err` says the namespace lacks one:
 * `temporal operator search-attribute create` with the attributes the namespace does not list
 * (all of them when the list cannot be read; creating one that exists is harmless). Undefined for
 * any other error.
 */
export async function searchAttributeFix(
  err: unknown,
  client: Client,
  address: string,
): Promise<string | undefined> {
  const refused = missingSearchAttribute(err);
  if (!refused) return undefined;
  const { namespace } = refused;
  let missing: (typeof SEARCH_ATTRIBUTES)[number][] = [...SEARCH_ATTRIBUTES];
  try {
    const unlisted = await unlistedSearchAttributes(client.connection, namespace);
    if (unlisted.length) missing = unlisted;
  } catch {
    // Not allowed to list (e.g. a cloud namespace without operator rights): name every attribute.
  }
  const addressArgs = address === DEFAULT_ADDRESS ? [] : ['--address', address];
  return [
    'temporal operator search-attribute create',
    ...addressArgs,
    '--namespace',
    namespace,
    ...searchAttributeCreateArgs(missing),
  ].join(' ');
}

/**
 * A failure to start work, for the CLI: with the fix when the namespace lacks a search attribute
 * (one line for the cause, one for the command), else `err` itself.
 */
export async function withSearchAttributeFix(
  err: unknown,
  what: string,
  client: Client,
  address: string,
): Promise<unknown> {
  const fix = await searchAttributeFix(err, client, address);
  return fix ? new CliError(`cannot start ${what}: ${causeChain(err)}`, 1, [`fix: ${fix}`]) : err;
}
