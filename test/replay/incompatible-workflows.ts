/**
 * A deliberately incompatible edit of the chat turn, for the replay test: it asks Claude before
 * the turn's start (input check and tool list), so the commands it issues do not match a
 * recorded history.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ClaudeActivities } from '../../activities/claude';
import type { TurnStartActivities } from '../../activities/turn-start';
import type { ChatTurnInput } from '../../src/schemas/turn-input';

const claude = proxyActivities<ClaudeActivities>({ startToCloseTimeout: '1 minute' });
const start = proxyLocalActivities<TurnStartActivities>({ startToCloseTimeout: '1 minute' });

export async function chatTurn(input: ChatTurnInput): Promise<unknown> {
  const reply = await claude.claude({ model: 'x', maxTokens: 10, step: 1 }, { transcriptSegment: [{ role: 'user', content: input.question }] });
  await start.prepareTurn(input);
  return reply;
}
