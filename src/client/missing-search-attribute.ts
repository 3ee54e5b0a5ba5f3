/**
 * A namespace that lacks one of mcp-turns' search attributes refuses every start that sets it:
 * which attribute, read from the server's refusal, and the command that registers it.
 */
import { SEARCH_ATTRIBUTES, searchAttributeCreateArgs } from '../core/search-attributes';
import { causeChain } from './describe-failure';

/** A start's refusal names the namespace; a list's, only the attribute (of the namespace asked). */
const MISSING_MAPPING = /Namespace (\S+) has no mapping defined for search attribute (\w+)/;
const INVALID_IN_QUERY = /invalid query: invalid search attribute: (McpTurns\w+)/;

/**
 * The namespace and the attribute `err` (or its causes) says the namespace lacks, if that is what
 * it says; `namespace` is the one asked, for a refusal that does not name it.
 */
export function missingSearchAttribute(err: unknown, namespace = 'default'): { namespace: string; name: string } | undefined {
  const chain = causeChain(err);
  const start = MISSING_MAPPING.exec(chain);
  if (start) return { namespace: start[1]!, name: start[2]! };
  const list = INVALID_IN_QUERY.exec(chain);
  return list ? { namespace, name: list[1]! } : undefined;
}

/** One line: what the namespace lacks, and the command that registers it. */
export function missingSearchAttributeLine({ namespace, name }: { namespace: string; name: string }): string {
  const key = SEARCH_ATTRIBUTES.filter((k) => k.name === name);
  const create = key.length ? `temporal operator search-attribute create --namespace ${namespace} ${searchAttributeCreateArgs(key).join(' ')}` : 'temporal operator search-attribute create';
  return `namespace ${namespace} has no search attribute ${name}: register it (${create}; docs/operations.md lists them all)`;
}
