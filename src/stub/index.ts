// The scripted Claude: tests, the offline demo and users' offline work talk to it through the real SDK.
export { startStubModel, type StubModel, type StubModelOptions, type RecordedRequest } from './stub-server';
export type { MessageBatchSettings, StubMessageBatches, MessageBatchLog, BatchRequestLog, BatchOutcome, BatchStatus } from './message-batches';
export { ScenarioSchema, ScenarioError, loadScenarioFile, parseScenario, type Scenario } from './scenario';
export { demoScenario } from './demo-scenario';
