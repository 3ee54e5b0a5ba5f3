/**
 * Tracing on demand: {@link startTracingFromEnv} reads OpenTelemetry's environment variables
 * (tracing-settings.ts) and, only when they ask for tracing, loads the OpenTelemetry SDK and starts
 * it (otel-tracing.ts). Off by default; off costs nothing, not even loading the SDK.
 */
import type * as OtelTracing from './otel-tracing';
import { tracingSettingsFromEnv } from './tracing-settings';

/** Tracing running in this process. */
export type Tracing = OtelTracing.Tracing;

/**
 * Starts tracing when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set, naming this
 * process `defaultServiceName` unless `OTEL_SERVICE_NAME` is set; returns undefined otherwise.
 * Call once per process, before creating clients and workers. Throws `TracingConfigError` for
 * settings it cannot honour.
 */
export function startTracingFromEnv(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  const settings = tracingSettingsFromEnv(defaultServiceName, env);
  if (!settings) return undefined;
  // Loaded here and only here, so a process that does not trace never loads the SDK.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startOtelTracing } = require('./otel-tracing') as typeof OtelTracing;
  return startOtelTracing(settings);
}
