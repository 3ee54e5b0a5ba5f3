/**
 * `mcp-turns/stub`: the scripted, Anthropic-compatible Claude for tests and offline work. Point a
 * worker at its `url` with `ANTHROPIC_BASE_URL`; a request plays the scenario its model names (or
 * the default scenario).
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
} from '../stub';
