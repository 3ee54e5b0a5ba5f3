/**
 * mcp-turns' search attributes on a dev server it runs. `temporal server start-dev
 * --search-attribute` registers them only when it creates its database: a database made by an
 * earlier version lacks the attributes added since, and every start that sets one would fail. So
 * each time mcp-turns starts or finds its dev server, the attributes the namespace does not list are
 * added (one list call when none is missing).
 */
import type { ConnectionLike } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../core/search-attributes';

const { IndexedValueType } = temporal.api.enums.v1;

const INDEXED_TYPE: Partial<Record<string, temporal.api.enums.v1.IndexedValueType>> = {
  [SearchAttributeType.KEYWORD]: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.INT]: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  [SearchAttributeType.DOUBLE]: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
};

/** mcp-turns' attributes that `namespace` does not list. */
export async function unlistedSearchAttributes(connection: ConnectionLike, namespace: string): Promise<(typeof SEARCH_ATTRIBUTES)[number][]> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(listed.customAttributes ?? {}));
  return SEARCH_ATTRIBUTES.filter((k) => !known.has(k.name));
}

/** Adds the attributes `namespace` lacks; answers their names (none when all were there). */
export async function registerMissingSearchAttributes(connection: ConnectionLike, namespace: string): Promise<string[]> {
  const missing = await unlistedSearchAttributes(connection, namespace);
  if (!missing.length) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, INDEXED_TYPE[k.type]!])),
  });
  return missing.map((k) => k.name);
}
