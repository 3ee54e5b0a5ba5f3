/**
 * An OTLP/HTTP trace receiver in the test process: what a collector's `/v1/traces` endpoint is for
 * exporters (JSON encoding, gzip or not). It keeps every span it is sent, flattened with its
 * resource's `service.name` and its instrumentation scope.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';

/** An OTLP/JSON attribute value (the fields the exporters send). */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}

interface KeyValue {
  key: string;
  value: AnyValue;
}

interface ExportTraceServiceRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}

/** One span as received. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Absent (or empty) for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  service: string;
  scope: string;
  attributes: Record<string, string | number | boolean | undefined>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpReceiver {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT` (spans go to `<url>/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received (each may carry many spans). */
  requests: number;
  close(): Promise<void>;
}

function valueOf(v: AnyValue): string | number | boolean | undefined {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.doubleValue ?? v.boolValue;
}

function attributesOf(list: KeyValue[] = []): ReceivedSpan['attributes'] {
  return Object.fromEntries(list.map((kv) => [kv.key, valueOf(kv.value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: '', spans: [], requests: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end('this receiver reads OTLP/JSON');
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw;
      const request = JSON.parse(body.toString('utf8')) as ExportTraceServiceRequest;
      receiver.requests++;
      for (const rs of request.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            receiver.spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind,
              service,
              scope: ss.scope?.name ?? '',
              attributes: attributesOf(s.attributes),
              statusCode: s.status?.code ?? 0,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}
