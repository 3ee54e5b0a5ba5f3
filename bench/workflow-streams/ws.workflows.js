// Workflow code for ws.bench.js (bundled by @temporalio/worker's bundler).
const wf = require('@temporalio/workflow');
const { WorkflowStream } = require('@temporalio/workflow-streams/workflow');

const acts = wf.proxyActivities({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 1 } });

// A "turn": model step 1 (streams 40 deltas + tool-call events), a tool call,
// model step 2 (40 deltas + finish events). stream=false: same activities, no stream host.
// graceMs>0: after the last activity, publish nothing more but keep the run open graceMs
// (a durable timer) so parked/cooling-down subscribers can drain the tail.
async function turn(opts) {
  const { stream, deltas, gapMs, batchIntervalMs, graceMs } = opts;
  if (stream) new WorkflowStream();
  const a = { stream, deltas, gapMs, batchIntervalMs };
  await acts.modelStep({ ...a, step: 1, tail: ['tool-call', 'finish-step'] });
  await acts.toolCall({ ...a, events: ['tool-result'] });
  await acts.modelStep({ ...a, step: 2, tail: ['finish'] });
  if (graceMs > 0) await wf.sleep(graceMs);
  return 'done';
}

module.exports = { turn };
