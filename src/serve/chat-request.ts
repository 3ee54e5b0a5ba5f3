/**
 * The body `useChat` (the AI SDK's `DefaultChatTransport`) posts to `/api/chat`, and what it asks
 * for. The conversation keeps the history, so only the last message counts: the user's is a new
 * message (or the same one again, to regenerate); the assistant's carries the user's answers to
 * approval requests (tool parts in state `approval-responded`), and its metadata says where its
 * turn's stream paused. Unknown part types and extra keys pass; what is read is checked, and a body
 * that asks for nothing usable is refused with one line naming the field.
 */
import { z } from 'zod';
import { parseApprovalId } from './ui-message-stream';
import { ConversationIdSchema, IdSchema, MessageIdSchema } from '../schemas/ids';

const partSchema = z.looseObject({ type: z.string() });

const messageSchema = z.looseObject({
  id: MessageIdSchema,
  role: z.enum(['system', 'user', 'assistant']),
  parts: z.array(partSchema),
  metadata: z.unknown().optional(),
});

export const chatRequestSchema = z.looseObject({
  /** The chat's id: the conversation's. */
  id: ConversationIdSchema,
  messages: z.array(messageSchema).min(1),
  trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
  messageId: z.string().optional(),
});

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;

const textPartSchema = z.looseObject({ type: z.literal('text'), text: z.string() });

const respondedToolPartSchema = z.looseObject({
  toolCallId: z.string(),
  state: z.literal('approval-responded'),
  approval: z.looseObject({ id: z.string(), approved: z.boolean(), reason: z.string().optional() }),
});

/** Where the assistant message's turn paused, as its stream's end said. */
const resumeSchema = z.looseObject({ turnId: IdSchema, offset: z.number().int().nonnegative() });

export type ChatAction =
  | { kind: 'message'; chatId: string; text: string; messageId: string; regenerate: boolean }
  | {
      kind: 'approvals';
      chatId: string;
      decisions: { turnId: string; callId: string; approved: boolean; reason?: string }[];
      resume?: { turnId: string; offset: number };
    };

export class ChatRequestError extends Error {
  override name = 'ChatRequestError';
}

/** What a posted chat body asks for; throws {@link ChatRequestError} when it asks for nothing usable. */
export function chatActionOf(body: unknown): ChatAction {
  const { id: chatId, messages, trigger } = parse(chatRequestSchema, body, []);
  const i = messages.length - 1;
  const last = messages[i]!;
  if (last.role === 'user') {
    const texts = last.parts.flatMap((part, j) =>
      part.type === 'text' ? [parse(textPartSchema, part, ['messages', i, 'parts', j]).text] : [],
    );
    const text = texts.join('\n');
    if (!text.trim()) throw new ChatRequestError('messages: the last message has no text');
    return {
      kind: 'message',
      chatId,
      text,
      messageId: last.id,
      regenerate: trigger === 'regenerate-message',
    };
  }
  if (last.role !== 'assistant')
    throw new ChatRequestError(
      `messages[${i}].role: the last message is neither the user's nor the assistant's`,
    );

  const decisions: Extract<ChatAction, { kind: 'approvals' }>['decisions'] = [];
  last.parts.forEach((part, j) => {
    const isTool = part.type === 'dynamic-tool' || part.type.startsWith('tool-');
    if (!isTool || part.state !== 'approval-responded') return;
    const path = ['messages', i, 'parts', j];
    const { toolCallId, approval } = parse(respondedToolPartSchema, part, path);
    const named = parseApprovalId(approval.id);
    if (!named || named.callId !== toolCallId || !IdSchema.safeParse(named.turnId).success)
      throw new ChatRequestError(
        `${z.core.toDotPath([...path, 'approval', 'id'])}: not an approval id of call ${toolCallId}`,
      );
    decisions.push({
      ...named,
      approved: approval.approved,
      ...(approval.reason !== undefined ? { reason: approval.reason } : {}),
    });
  });
  if (decisions.length === 0)
    throw new ChatRequestError(
      "messages: the last message is the assistant's and answers no approval request",
    );
  const resume = resumeSchema.safeParse(last.metadata);
  return {
    kind: 'approvals',
    chatId,
    decisions,
    ...(resume.success ? { resume: { turnId: resume.data.turnId, offset: resume.data.offset } } : {}),
  };
}

/** `value` parsed by `schema`, or a ChatRequestError naming each problem's field (below `at`) in one line. */
function parse<T extends z.ZodType>(schema: T, value: unknown, at: (string | number)[]): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const path = z.core.toDotPath([...at, ...issue.path]);
    return `${path || 'body'}: ${issue.message}`;
  });
  throw new ChatRequestError(problems.join('; '));
}
