/**
 * The `response_formatter` tool (docs/response-format.md): Claude is forced to call it at the end of a turn,
 * and its input is the structured answer. The zod schema is the source of truth; the JSON Schema sent
 * to Claude is written out beside it because Claude needs descriptions and enums it can read.
 */
import { z } from 'zod';

export const FORMATTER_TOOL_NAME = 'response_formatter';

export const ARTIFACT_TYPES = [
  'text/markdown',
  'application/vnd.ant.code',
  'image/svg+xml',
  'application/vnd.mermaid',
  'text/html',
  'application/vnd.react',
  'application/vnd.bibliography',
] as const;

export const FormatterArtifactSchema = z
  .object({
    type: z.enum(ARTIFACT_TYPES),
    id: z.string().min(1),
    title: z.string(),
    content: z.string(),
    language: z.string().optional(),
  })
  .strict();

export const FormatterItemSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), content: z.string() }).strict(),
  z.object({ type: z.literal('artifact'), artifact: FormatterArtifactSchema }).strict(),
]);

export const FormatterOutputSchema = z
  .object({
    /** Optional reasoning the model chose to share. */
    thinking: z.string().optional(),
    /** The answer, as text and artifacts in reading order. */
    conversation: z.array(FormatterItemSchema).min(1),
  })
  .strict();

export type FormatterOutput = z.infer<typeof FormatterOutputSchema>;
export type FormatterItem = z.infer<typeof FormatterItemSchema>;

/** The tool definition sent to Claude (JSON Schema, as the API wants `input_schema`). */
export const FORMATTER_TOOL = {
  name: FORMATTER_TOOL_NAME,
  description:
    'Format the final answer to the user as JSON: an ordered list of markdown text parts and artifacts ' +
    '(code, documents, diagrams, SVG, HTML, React components, bibliographies).',
  input_schema: {
    type: 'object' as const,
    properties: {
      thinking: { type: 'string', description: 'Optional short reasoning behind the answer.' },
      conversation: {
        type: 'array',
        description: 'The answer in reading order. Must be an array, never a string.',
        items: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['text', 'artifact'] },
            content: { type: 'string', description: 'Markdown text (when type is "text").' },
            artifact: {
              type: 'object',
              description: 'When type is "artifact".',
              properties: {
                type: { type: 'string', enum: [...ARTIFACT_TYPES] },
                id: { type: 'string', description: 'Short kebab-case identifier.' },
                title: { type: 'string' },
                content: { type: 'string' },
                language: { type: 'string', description: 'Programming language, for code artifacts.' },
              },
              required: ['type', 'id', 'title', 'content'],
            },
          },
          required: ['type'],
        },
      },
    },
    required: ['conversation'],
  },
};

/** Appended to the system prompt of the formatter call. */
export const FORMATTER_INSTRUCTIONS = [
  `You MUST answer by calling the ${FORMATTER_TOOL_NAME} tool. Do not answer with plain text.`,
  "The 'conversation' field MUST be an array of objects, each with 'type' either \"text\" or \"artifact\".",
  'Text parts hold markdown. Put code, long documents, diagrams and similar standalone content in artifacts.',
  'Base the answer on the tool results in the conversation; say so plainly when a tool failed.',
].join('\n');

/** One line per problem, with the path, for the repair call. */
export function describeFormatterErrors(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
}
