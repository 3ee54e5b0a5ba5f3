/**
 * Tracing on demand: {@link startTracing} loads the OpenTelemetry SDK and starts it
 * (otel-tracing.ts) only when the settings (tracing-settings.ts) ask for tracing. Off by default;
 * off costs nothing, not even loading the SDK.
 */
import type * as OtelTracing from './otel-tracing';
import type { TracingSettings } from './tracing-settings';

/** Tracing running in this process. */
export type Tracing = OtelTracing.Tracing;

/**
 * Starts tracing as `settings` say; undefined (and nothing loaded) when they are undefined, tracing
 * off. Call once per process, before creating clients and workers.
 */
export function startTracing(settings: TracingSettings | undefined): Tracing | undefined {
  if (!settings) return undefined;
  // Loaded here and only here, so a process that does not trace never loads the SDK.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startOtelTracing } = require('./otel-tracing') as typeof OtelTracing;
  return startOtelTracing(settings);
}
