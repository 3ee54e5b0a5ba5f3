/**
 * What a caller may reach by id: an admin any workflow; anyone else only what they own
 * (src/client/owner.ts). A workflow that is someone else's is answered exactly as one that does not
 * exist (404, the same line), so its id's answers tell nothing of it.
 */
import { describeId, type IdDescription } from '../client/describe-id';
import { visibleTo } from '../client/owner';
import { viewerOf, type Caller } from './caller';
import { notFound } from './http-error';
import type { ServeContext } from './serve-context';

/** Workflow `id` as `caller` may see it; else (none, or not theirs) 404 "no <what> <id>". */
export async function requireVisible(ctx: ServeContext, caller: Caller, id: string, what: string): Promise<IdDescription> {
  const described = await describeId(ctx.client, id);
  if (!described || !visibleTo(viewerOf(caller), described.searchAttributes)) throw notFound(`${what} ${id}`);
  return described;
}
