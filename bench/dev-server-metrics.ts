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
