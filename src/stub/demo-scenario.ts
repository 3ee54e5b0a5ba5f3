import type { Scenario } from './scenario';
import demo from './scenarios/demo.json';

/** The bundled scenario `mcp-turns demo` plays without an API key (server-everything's tools). */
export const demoScenario: Scenario = demo as Scenario;
