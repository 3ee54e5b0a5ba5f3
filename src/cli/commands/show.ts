import { Command } from 'commander';
import { WorkflowNotFoundError } from '@temporalio/client';
import { connectOrFail } from '../connect';
import { getTurnTranscript } from '../../client/turn-transcript';
import { workflowUrl } from '../../client/ui-link';
import { readDevServerRecord } from '../../temporal/dev-server-record';
import { CliError } from '../cli-error';
import { renderResult, toolCallLine } from '../render';

export function showCommand(): Command {
  return new Command('show')
    .description('print the transcript of a finished or running turn')
    .argument('<workflowId>')
    .option('--json', 'print the transcript as JSON')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (workflowId: string, opts: { json?: boolean; address?: string; namespace?: string }) => {
      const { client, address, namespace } = await connectOrFail({ address: opts.address, namespace: opts.namespace });
      try {
        const t = await getTurnTranscript(client, workflowId).catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) throw new CliError(`no workflow ${workflowId} in namespace ${namespace}`);
          throw err;
        });
        if (opts.json) {
          console.log(JSON.stringify(t, null, 2));
          return;
        }
        const lines = [`Turn ${t.workflowId} · ${t.status} · started ${t.startTime}${t.closeTime ? ` · closed ${t.closeTime}` : ''}`];
        if (t.question) lines.push(`Question: ${t.question}`, '');
        if (t.result) {
          lines.push(renderResult(t.result, workflowUrl(address, namespace, workflowId, readDevServerRecord(address)?.uiUrl)));
        } else if (t.progress) {
          const p = t.progress;
          lines.push(`Now: ${p.phase}, step ${p.step} · ${p.usage.inputTokens} in / ${p.usage.outputTokens} out tokens`);
          for (const c of p.toolCalls) lines.push(`${toolCallLine(c)}${c.status === 'running' ? ' (running)' : ''}`);
        } else if (t.error) lines.push(`Failed: ${t.error}`);
        console.log(lines.join('\n'));
      } finally {
        await client.connection.close();
      }
    });
}
