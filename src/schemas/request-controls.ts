/**
 * The request controls a turn may set on its Claude calls: `effort`, `stopSequences`, `toolChoice`,
 * `cache` and `userId` (src/core/request-controls.ts says what each does to a request). The legacy
 * sampling fields are named too, so a caller written against an older API version gets one line
 * saying why they are refused instead of "unknown key".
 */
import { z } from 'zod';
import { EFFORTS, CACHE_TTLS, LEGACY_SAMPLING_MESSAGE, LEGACY_SAMPLING_FIELDS, MAX_STOP_SEQUENCES, MAX_USER_ID_LENGTH } from '../core/request-controls';

/** `output_config.effort`: how much the model puts into its answer. */
export const EffortSchema = z.enum(EFFORTS);

/** Strings that end a loop call where Claude writes them (`stop_reason: "stop_sequence"`). */
export const StopSequencesSchema = z
  .array(
    z
      .string()
      .max(200, 'at most 200 characters')
      .refine((s) => s.trim().length > 0, 'a stop sequence must contain something other than whitespace'),
  )
  .min(1)
  .max(MAX_STOP_SEQUENCES, `at most ${MAX_STOP_SEQUENCES} stop sequences`);

const CacheTtlSchema = z.enum(CACHE_TTLS);

/**
 * The prompt cache's lifetime: `ttl` for the breakpoints on the tools and the system prompt (what
 * every turn repeats), `conversationTtl` for the one on the conversation's last message (what the
 * next step reads back within seconds; default 5m). The API takes 1 h breakpoints only before 5 min
 * ones, so the conversation's may not outlive the prefix's.
 */
export const CacheControlsSchema = z
  .object({ ttl: CacheTtlSchema, conversationTtl: CacheTtlSchema.optional() })
  .strict()
  .refine((c) => !(c.ttl === '5m' && c.conversationTtl === '1h'), {
    message: 'conversationTtl "1h" after a ttl of "5m" is refused by the API (1 h breakpoints come first): set ttl to "1h" too',
    path: ['conversationTtl'],
  });

const TOOL_CHOICE_WORDS = ['auto', 'any', 'none'] as const;

/**
 * The loop's `tool_choice`: `auto`, `any` (some tool), `none`, or one tool by its `server__tool`
 * name; `on: "first"` (the default) forces the loop's first call only, `"every"` every call of
 * the loop (a loop forced on every call runs until `maxSteps`). A string is the choice with
 * `on: "first"`.
 */
export const ToolChoiceSchema = z.union([
  z.string().min(1).max(200, 'at most 200 characters'),
  z
    .object({
      type: z.enum([...TOOL_CHOICE_WORDS, 'tool']),
      /** With `type: "tool"`: the tool, `server__tool` as in tool patterns, or its name as Claude sees it. */
      name: z.string().min(1).max(200).optional(),
      on: z.enum(['first', 'every']).optional(),
      /** At most one tool call per reply. */
      disableParallelToolUse: z.boolean().optional(),
    })
    .strict()
    .refine((c) => (c.type === 'tool') === (c.name !== undefined), {
      message: 'name is given with type "tool", and only then',
      path: ['name'],
    }),
]);

/**
 * The end user's id, sent as `metadata.user_id` (Anthropic may use it to detect abuse): an opaque
 * id, a uuid or a hash, never a name or an e-mail address. `serve` sets it from its caller.
 */
export const UserIdSchema = z
  .string()
  .min(1)
  .max(MAX_USER_ID_LENGTH, `at most ${MAX_USER_ID_LENGTH} characters`)
  .refine((s) => !s.includes('@'), 'an opaque id (a uuid or a hash), not an e-mail address');

/** A field the API no longer takes: present, it is refused with {@link LEGACY_SAMPLING_MESSAGE}. */
const LegacySamplingField = z.unknown().refine((v) => v === undefined, LEGACY_SAMPLING_MESSAGE).optional();

/** `temperature`, `top_p`, `top_k` (and their camelCase spellings), each refused by name. */
export const legacySamplingFields = Object.fromEntries(LEGACY_SAMPLING_FIELDS.map((f) => [f, LegacySamplingField])) as Record<
  (typeof LEGACY_SAMPLING_FIELDS)[number],
  typeof LegacySamplingField
>;

/** The controls as the worker's config sets them for turns that set none (`claude:`). */
export const RequestControlDefaultsSchema = {
  effort: EffortSchema.optional(),
  stopSequences: StopSequencesSchema.optional(),
  toolChoice: ToolChoiceSchema.optional(),
  cache: CacheControlsSchema.optional(),
};
