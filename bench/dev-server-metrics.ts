/** Reading a dev server's Prometheus metrics (`temporal server start-dev --metrics-port`) in benches. */
import http from 'node:http';

/** The metrics page of the dev server whose metrics listen on `metricsPort`. */
export function metricsText(metricsPort: number): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${metricsPort}/metrics`, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

/** A counter of the metrics page summed by one label, for the series whose labels match `where`. */
function countersBy(text: string, metric: string, label: string, where: RegExp = /./): Map<string, number> {
  const counts = new Map<string, number>();
  const line = new RegExp(`^${metric}\\{([^}]*)\\} (\\S+)$`);
  for (const l of text.split('\n')) {
    const m = line.exec(l);
    if (!m || !where.test(m[1]!)) continue;
    const value = new RegExp(`${label}="([^"]*)"`).exec(m[1]!)?.[1] ?? '?';
    counts.set(value, (counts.get(value) ?? 0) + Number(m[2]));
  }
  return counts;
}

/** The dev server's `service_requests` of its frontend (what clients and workers ask it), by operation. */
export async function frontendRequests(metricsPort: number): Promise<Map<string, number>> {
  return countersBy(await metricsText(metricsPort), 'service_requests', 'operation', /service_name="frontend"/);
}

/** The dev server's requests to its database (`persistence_requests`), by operation. */
export async function persistenceRequests(metricsPort: number): Promise<Map<string, number>> {
  return countersBy(await metricsText(metricsPort), 'persistence_requests', 'operation');
}

/** `after - before`, per key. */
export function counterDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}

/** The server's metrics are flushed about once a second. */
export const METRICS_FLUSH_MS = 1200;
