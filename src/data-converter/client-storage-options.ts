/**
 * What every mcp-turns `Client` is made with: the one data converter (data-converter.ts) and the
 * interceptor that turns a payload refused for its size into one line (client-payload-limit.ts).
 */
import type { ClientOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { payloadLimitClientInterceptor } from '../storage/client-payload-limit';

/** Spread into `new Client({ connection, namespace, ...clientStorageOptions(dataConverter) })`. */
export function clientStorageOptions(dataConverter: DataConverter): Pick<ClientOptions, 'dataConverter' | 'interceptors'> {
  return { dataConverter, interceptors: { workflow: [payloadLimitClientInterceptor()] } };
}
