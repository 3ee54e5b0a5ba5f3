/**
 * Deterministic stand-ins for the API's opaque thinking signatures and redacted data: the stub can
 * tell whether a block it issued came back unchanged.
 */
import { createHmac } from 'node:crypto';

const KEY = 'mcp-turns-stub-model';

export function thinkingSignature(thinking: string): string {
  return createHmac('sha256', KEY).update(`thinking:${thinking}`).digest('base64');
}

export const redactedData = {
  make(seed: string): string {
    const body = Buffer.from(`redacted:${seed}`).toString('base64');
    return `${body}.${createHmac('sha256', KEY).update(body).digest('base64')}`;
  },
  verify(data: string): boolean {
    const [body, mac] = data.split('.');
    return !!body && mac === createHmac('sha256', KEY).update(body).digest('base64');
  },
};
