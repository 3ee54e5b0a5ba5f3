/**
 * A deliberately incompatible edit of the chat turn, for the replay test: it asks Claude before
 * listing tools, so the commands it issues no longer match a recorded history.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ChatTurnActivities } from '../../src/core/contracts';
import type { ChatTurnInput } from '../../src/core/turn-input';

const acts = proxyActivities<ChatTurnActivities>({ startToCloseTimeout: '1 minute' });

export async function chatTurn(input: ChatTurnInput): Promise<unknown> {
  const reply = await acts.claude({ model: 'x', messages: [{ role: 'user', content: input.question }], tools: [], maxTokens: 10, step: 1 });
  await acts.listTools({});
  return reply;
}
