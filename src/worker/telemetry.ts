/**
 * Worker telemetry: Temporal's own Prometheus metrics (task latencies, slots, polls) plus
 * mcp-turns' (tool calls by server, tool and outcome; breaker state; Claude calls and tokens),
 * all served from one endpoint through the Temporal Runtime's meter.
 */
import { Runtime, makeTelemetryFilterString, type LogLevel } from '@temporalio/worker';
import { logWithFailureMessagesWithheld } from './failure-log-redaction';
import { WorkerLogger } from './worker-logger';

export interface TelemetryOptions {
  /** host:port for Prometheus (`/metrics`); undefined = no endpoint. */
  metricsAddress?: string;
  /** @default "INFO" */
  logLevel?: LogLevel;
  /** Log failures by type only, without their messages (encryption is on). @default false */
  withholdFailureMessages?: boolean;
}

let installed = false;

/** Installs the Runtime once per process (Temporal allows only one). */
export function installTelemetry(opts: TelemetryOptions): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    logger: new WorkerLogger(opts.logLevel ?? 'INFO', opts.withholdFailureMessages ? logWithFailureMessagesWithheld : undefined),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(opts.metricsAddress ? { metrics: { prometheus: { bindAddress: opts.metricsAddress } } } : {}),
    },
  });
}
