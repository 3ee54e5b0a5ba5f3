// One turn from code: its answer printed as it is written, then how it ended and what it cost.
// Needs a Temporal server (TEMPORAL_ADDRESS, a profile, or localhost:7233) and a running worker.
import { ANSWER_TEXT_ID, connectClient, executeChatTurn, type TurnStreamEvent } from 'mcp-turns';

/** Prints the answer's text as the formatter writes it. */
const printAnswer = (e: TurnStreamEvent): void => {
  if (e.type === 'text-delta' && e.id === ANSWER_TEXT_ID) process.stdout.write(e.delta);
};

async function run(): Promise<void> {
  const client = await connectClient();
  try {
    const question = process.argv[2] ?? 'What files are in /tmp?';
    const result = await executeChatTurn(client, { question }, { stream: { onEvent: printAnswer } });
    console.log(`\nstop reason: ${result.stopReason}, cost: $${result.costUsd.toFixed(4)}`);
  } finally {
    await client.connection.close();
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
