/**
 * The schema of `serverTools` (src/core/server-tools.ts): on a turn's input, a conversation's
 * options, a batch line, the config's `claude` section and its toolsets. Each tool's options are the
 * API's, camelCased; what the API refuses is refused here first, naming the field: allowed and
 * blocked domains together, a location for web fetch, a content limit for web search.
 */
import { z } from 'zod';

const Domains = z.array(z.string().min(1).max(253)).min(1).max(100);

const UserLocationSchema = z
  .object({
    type: z.literal('approximate'),
    city: z.string().min(1).max(255).optional(),
    region: z.string().min(1).max(255).optional(),
    /** Two-letter ISO country code. */
    country: z.string().length(2).optional(),
    /** IANA time zone, e.g. Europe/Oslo. */
    timezone: z.string().min(1).max(255).optional(),
  })
  .strict();

const oneDomainList = (o: { allowedDomains?: string[] | undefined; blockedDomains?: string[] | undefined }, ctx: z.RefinementCtx): void => {
  if (o.allowedDomains && o.blockedDomains) {
    ctx.addIssue({ code: 'custom', path: ['blockedDomains'], message: 'allowedDomains and blockedDomains exclude each other: give one' });
  }
};

const WebSearchSchema = z
  .object({
    version: z.enum(['web_search_20250305', 'web_search_20260209', 'web_search_20260318']).optional(),
    maxUses: z.number().int().min(1).optional(),
    allowedDomains: Domains.optional(),
    blockedDomains: Domains.optional(),
    userLocation: UserLocationSchema.optional(),
  })
  .strict()
  .superRefine(oneDomainList);

const WebFetchSchema = z
  .object({
    version: z.enum(['web_fetch_20250910', 'web_fetch_20260209', 'web_fetch_20260309', 'web_fetch_20260318']).optional(),
    maxUses: z.number().int().min(1).optional(),
    allowedDomains: Domains.optional(),
    blockedDomains: Domains.optional(),
    maxContentTokens: z.number().int().min(1).optional(),
    citations: z.boolean().optional(),
  })
  .strict()
  .superRefine(oneDomainList);

const CodeExecutionSchema = z
  .object({ version: z.enum(['code_execution_20250825', 'code_execution_20260120', 'code_execution_20260521']).optional() })
  .strict();

/** `true` (defaults), options, or `false` (off, over a default the worker or a toolset gives). */
export const ServerToolsSchema = z
  .object({
    web_search: z.union([z.boolean(), WebSearchSchema]).optional(),
    web_fetch: z.union([z.boolean(), WebFetchSchema]).optional(),
    code_execution: z.union([z.boolean(), CodeExecutionSchema]).optional(),
  })
  .strict();
