import { Command } from 'commander';
import { WorkflowNotFoundError } from '@temporalio/client';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { getTurnView } from '../../client/turn-view';
import { WorkflowKindError } from '../../client/workflow-kind';
import { workflowUrl } from '../../client/ui-link';
import { describeId } from '../../client/describe-id';
import { runHealthLines } from '../../client/run-health';
import { readDevServerRecord } from '../../temporal/dev-server-record';
import { CliError } from '../cli-error';
import { EXIT } from '../exit-codes';
import { renderResult, toolCallLine } from '../render';
import { getConversationSummary, type ConversationSummary } from '../../client/conversation-summary';
import { formatBytes } from '../../core/text';
import { oneLine } from '../../core/text';
import { approvalBlock, approvalLine } from '../approval-lines';

/** A conversation for the terminal: status, one line per turn, the transcript in figures. */
function renderConversation(c: ConversationSummary, link: string): string {
  const state = c.live
    ? ` (${c.live.state}${c.live.queued ? `, ${c.live.queued} queued` : ''})`
    : c.status === 'running'
      ? ' (no worker answered its status query)'
      : '';
  const lines = [
    `Conversation ${c.conversationId} · ${c.status}${state} · started ${c.startTime}${c.closeTime ? ` · closed ${c.closeTime}` : ''} · ${c.turns.length} turns`,
    '',
  ];
  for (const t of c.turns) {
    const question = t.question !== undefined ? oneLine(t.question, 60) : '?';
    let tail: string;
    if (t.answer !== undefined) {
      const u = t.usage;
      tail = `→ ${oneLine(t.answer, 60)} · ${t.stopReason} · ${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}${u ? ` · ${u.inputTokens} in / ${u.outputTokens} out tokens` : ''}`;
    } else if (t.now) tail = `… now ${t.now}`;
    else tail = `· ${t.error ? oneLine(t.error, 100) : 'no answer'}`;
    lines.push(`#${t.number} ${t.status} · ${question} ${tail}`);
    lines.push(`   ${t.turnId}`);
    for (const a of t.approvals ?? []) lines.push(`   approval: ${approvalLine(a)}`);
  }
  if (c.health) lines.push(...runHealthLines(c.health, c.conversationId).map((line) => `Blocked: ${line}`));
  const tr = c.transcript;
  lines.push('', `Transcript: ${tr.messages} messages in ${c.turns.length} turns, ${tr.toolResults} tool results, ${formatBytes(tr.bytes)} (the turns' own messages, before any compaction)`);
  lines.push(`Temporal UI: ${link}`);
  return lines.join('\n');
}

export function showCommand(): Command {
  return new Command('show')
    .description('print a turn (its transcript and result, or its progress) or a conversation (its status and turns)')
    .argument('<workflowId>')
    .option('--json', 'print the transcript as JSON')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (workflowId: string, opts: { json?: boolean; address?: string; namespace?: string }, command: Command) => {
      const settings = cliSettings(command);
      const { client, address, namespace } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      try {
        const named = await describeId(client, workflowId);
        if (!named) throw new CliError(`no workflow ${workflowId} in namespace ${namespace}`, EXIT.notFound);
        if (named.kind === 'conversation') {
          const summary = await getConversationSummary(client, workflowId);
          const link = workflowUrl(address, namespace, workflowId, readDevServerRecord(address, settings.stateDir)?.uiUrl ?? settings.uiUrl);
          console.log(opts.json ? JSON.stringify(summary, null, 2) : renderConversation(summary, link));
          return;
        }
        const t = await getTurnView(client, workflowId).catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) throw new CliError(`no workflow ${workflowId} in namespace ${namespace}`, EXIT.notFound);
          if (err instanceof WorkflowKindError) throw new CliError(`${err.message}: show prints turns and conversations`);
          throw err;
        });
        if (opts.json) {
          console.log(JSON.stringify(t, null, 2));
          return;
        }
        const lines = [`Turn ${t.workflowId} · ${t.status} · started ${t.startTime}${t.closeTime ? ` · closed ${t.closeTime}` : ''}`];
        if (t.question) lines.push(`Question: ${t.question}`, '');
        if (t.result) {
          // The approvals go after the result, before its link (renderResult's last line when given one).
          const link = workflowUrl(address, namespace, workflowId, readDevServerRecord(address, settings.stateDir)?.uiUrl ?? settings.uiUrl);
          lines.push(renderResult(t.result), ...approvalBlock(t.result.approvals ?? []), `Temporal UI: ${link}`);
        } else if (t.progress) {
          const p = t.progress;
          lines.push(`Now: ${p.phase}, step ${p.step} · ${p.usage.inputTokens} in / ${p.usage.outputTokens} out tokens`);
          for (const c of p.toolCalls) lines.push(`${toolCallLine(c)}${c.status === 'running' ? ' (running)' : ''}`);
          lines.push(...approvalBlock(p.pendingApprovals));
          if (t.health) lines.push(...runHealthLines(t.health, workflowId).map((line) => `Blocked: ${line}`));
        } else if (t.error) lines.push(`Failed: ${t.error}`);
        console.log(lines.join('\n'));
      } finally {
        await client.connection.close();
      }
    });
}
