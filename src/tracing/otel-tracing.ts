/**
 * OpenTelemetry tracing for one process, started only when the environment asks for it
 * (src/tracing/start-tracing.ts loads this module then, and never otherwise):
 *
 * - a tracer provider exporting over OTLP/HTTP in batches, registered globally with the
 *   AsyncLocalStorage context manager and W3C trace-context propagation;
 * - Temporal's OpenTelemetry plugin: client, workflow and activity interceptors (the workflow's
 *   from the package's own sandbox-safe entry, bundled into the workflow code) and the sink that
 *   exports the workflow's spans, so a turn is one trace from `startChatTurn` on;
 * - fetch (undici) instrumentation: every HTTP request an activity sends, to Claude or to an MCP
 *   server, is a span (the Anthropic SDK adds its own `anthropic.messages.create` span around its
 *   requests);
 * - MCP requests as spans over every transport, stdio included (traced-mcp-transport.ts).
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { setMcpTransportTracer } from './mcp-transport-hook';
import { TracedMcpTransport } from './traced-mcp-transport';
import type { TracingSettings } from './tracing-settings';

/** Tracing running in this process. */
export interface Tracing {
  /** Where spans go (OTLP over HTTP). */
  tracesEndpoint: string;
  /** This process's `service.name`. */
  serviceName: string;
  /**
   * Temporal's OpenTelemetry plugin: give it to a `Client` (`plugins: [plugin]`) to trace the turns
   * it starts, and to a `Worker` to trace workflows and activities (its workflow interceptors must
   * be bundled into the workflow code).
   */
  plugin: OpenTelemetryPlugin;
  /** Sends the spans still buffered and stops tracing. */
  shutdown(): Promise<void>;
}

/** The instrumentation scope of mcp-turns' own spans (MCP requests). */
const TRACER_NAME = 'mcp-turns';

/** Starts tracing in this process; call once. */
export function startOtelTracing(settings: TracingSettings): Tracing {
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the default name.
  const resource = Resource.default()
    .merge(new Resource({ 'service.name': settings.serviceName }))
    .merge(envDetectorSync.detect());
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesEndpoint }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  const unregisterInstrumentations = registerInstrumentations({
    tracerProvider: provider,
    // Only requests made inside a trace: a connection's own streams are not part of any turn.
    instrumentations: [new UndiciInstrumentation({ requireParentforSpans: true })],
  });
  const mcpTracer = provider.getTracer(TRACER_NAME);
  setMcpTransportTracer((transport, target) => new TracedMcpTransport(transport, target, mcpTracer));
  return {
    tracesEndpoint: settings.tracesEndpoint,
    serviceName: settings.serviceName,
    plugin: new OpenTelemetryPlugin({ resource, spanProcessor }),
    async shutdown() {
      setMcpTransportTracer(undefined);
      unregisterInstrumentations();
      await provider.shutdown();
    },
  };
}
