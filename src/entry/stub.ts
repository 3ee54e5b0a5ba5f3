/**
 * `mcp-turns/stub`: the scripted, Anthropic-compatible Claude for tests and offline work. Point a
 * worker at its `url` with `ANTHROPIC_BASE_URL`; a request plays the scenario its model names (or
 * the default scenario). It serves the Message Batches API too (`stub.messageBatches` logs each batch).
 */
export {
  startStubModel,
  demoScenario,
  parseScenario,
  loadScenarioFile,
  ScenarioError,
  type StubModel,
  type StubModelOptions,
  type RecordedRequest,
  type Scenario,
  type StubMessageBatches,
  type MessageBatchSettings,
  type MessageBatchLog,
  type BatchRequestLog,
} from '../stub';
