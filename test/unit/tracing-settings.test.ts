/** When tracing is on, read from OpenTelemetry's standard environment variables. */
import { TracingConfigError, tracingSettingsFromEnv } from '../../src/tracing/tracing-settings';

describe('tracingSettingsFromEnv', () => {
  it('is off without an OTLP endpoint', () => {
    expect(tracingSettingsFromEnv('mcp-turns-worker', {})).toBeUndefined();
    expect(tracingSettingsFromEnv('mcp-turns-worker', { OTEL_EXPORTER_OTLP_ENDPOINT: '  ', OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
  });

  it('sends to <endpoint>/v1/traces, or to the traces endpoint as given', () => {
    expect(tracingSettingsFromEnv('mcp-turns-worker', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      tracesEndpoint: 'http://collector:4318/v1/traces',
      serviceName: 'mcp-turns-worker',
    });
    expect(
      tracingSettingsFromEnv('mcp-turns-worker', {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
        OTEL_SERVICE_NAME: 'turns-eu',
      }),
    ).toEqual({ tracesEndpoint: 'https://traces.example/otlp', serviceName: 'turns-eu' });
  });

  it('is turned off by OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingSettingsFromEnv('w', { ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
    expect(tracingSettingsFromEnv('w', { ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingSettingsFromEnv('w', { ...endpoint, OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' })).toBeDefined();
  });

  it('accepts OTLP over HTTP and refuses gRPC, naming the HTTP port', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317' };
    expect(tracingSettingsFromEnv('w', { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeDefined();
    expect(tracingSettingsFromEnv('w', { ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBeDefined();
    expect(() => tracingSettingsFromEnv('w', { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(TracingConfigError);
    expect(() => tracingSettingsFromEnv('w', { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTLP\/HTTP port \(4318\)/);
  });
});
