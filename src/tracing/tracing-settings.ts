/**
 * Whether to trace, read from OpenTelemetry's standard environment variables. Tracing is off unless
 * an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * plus `/v1/traces`), and `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off
 * again. Reading the settings loads no OpenTelemetry code: a process that does not trace pays
 * nothing for it.
 */

/** What tracing needs from the environment. */
export interface TracingSettings {
  /** Where spans are sent: OTLP over HTTP (JSON), the full `/v1/traces` URL. */
  tracesEndpoint: string;
  /** `service.name` of every span this process exports (`OTEL_SERVICE_NAME` wins). */
  serviceName: string;
}

/** Tracing is asked for in a way mcp-turns cannot honour (e.g. OTLP over gRPC). */
export class TracingConfigError extends Error {
  override name = 'TracingConfigError';
}

/** The collector's port for OTLP over HTTP, named in the error for a gRPC protocol. */
const OTLP_HTTP_PORT = 4318;

function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/**
 * The tracing settings, or undefined when tracing is off. `defaultServiceName` names this process
 * when `OTEL_SERVICE_NAME` is unset (`mcp-turns-worker`, or a client's own name). Throws
 * {@link TracingConfigError} for a protocol other than OTLP over HTTP.
 */
export function tracingSettingsFromEnv(defaultServiceName: string, env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if (setting(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporters = setting(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase().split(',').map((e) => e.trim());
  if (exporters?.includes('none')) return undefined;
  const tracesEndpoint =
    setting(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ??
    setting(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')?.replace(/\/+$/, '').concat('/v1/traces');
  if (!tracesEndpoint) return undefined;
  const protocol = setting(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? setting(env, 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol && !protocol.startsWith('http/')) {
    throw new TracingConfigError(
      `OTLP protocol "${protocol}" is not supported: mcp-turns exports traces over HTTP; ` +
        `point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (${OTLP_HTTP_PORT}) and unset the protocol`,
    );
  }
  return { tracesEndpoint, serviceName: setting(env, 'OTEL_SERVICE_NAME') ?? defaultServiceName };
}
