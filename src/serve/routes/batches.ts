/**
 * Batches over HTTP, by name, whoever started them: `GET /v1/batches/{name}` answers its progress
 * summed over its shards and whether it has ended (src/client/batch-status.ts); `GET
 * /v1/batches/{name}/results` streams its result lines as NDJSON, one line per ended turn as it is
 * fetched (src/client/batch-results.ts). A caller sees a batch whose shards carry their owner (an
 * admin any batch); anyone else's is 404, the very answer a name that names nothing gets.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { BatchResultsShortfallError, getBatchResults } from '../../client/batch-results';
import { getBatchStatus } from '../../client/batch-status';
import { NotFoundError } from '../../client/not-found';
import type { ResultLine } from '../../client/result-line';
import { oneLine } from '../../core/text';
import { BatchNameSchema } from '../../schemas/ids';
import { viewerOf } from '../caller';
import { notFound } from '../http-error';
import { callerOfRequest } from '../request-guard';
import type { ServeContext } from '../serve-context';
import { ErrorBody, Json } from './schemas';

const NameParams = z.object({ name: BatchNameSchema });

/** What the OpenAPI document shows of a line: its fixed fields, the rest named (src/client/result-line.ts has them all). */
const ResultLineDoc = z
  .looseObject({
    id: z.string().describe("The query's id in the batch (its turn is <batch>-<id>)."),
    status: z.enum(['completed', 'failed']),
    exitCode: z.number().int().optional().describe('What `mcp-turns run` exits with for the same result: 0 answered, 3 partial, 4 not approved, 1 failed.'),
    workflowId: z.string().describe("The turn's workflow id."),
  })
  .describe(
    'One line per ended turn, by close time, as `mcp-turns batch` writes it: also answer, output, outputProblems, stopReason, stopSequence, usage, costUsd, toolCalls, durationMs, error. ' +
      'A last line { "error": "<one line>" } (no id) says not every line could be given: visibility did not list every turn the ended batch finished in time, or a read failed.',
  );

function links(name: string) {
  const self = `/v1/batches/${encodeURIComponent(name)}`;
  return { self, results: `${self}/results` };
}

/** `find()`, with a batch that is not there, or not the caller's, as 404 "no batch <name>". */
async function visibleBatch<T>(name: string, find: () => Promise<T>): Promise<T> {
  try {
    return await find();
  } catch (err) {
    if (err instanceof NotFoundError) throw notFound(`batch ${name}`);
    throw err;
  }
}

/** The lines as NDJSON; a failure to read them is one last `{ error }` line (the status is sent already). */
async function* ndjson(lines: AsyncIterable<ResultLine>, ctx: ServeContext, name: string): AsyncGenerator<string> {
  try {
    for await (const line of lines) yield `${JSON.stringify(line)}\n`;
  } catch (err) {
    const message = err instanceof BatchResultsShortfallError ? err.message : `the results of batch ${name} could not be read: ${oneLine((err as Error).message, 300)}`;
    if (!(err instanceof BatchResultsShortfallError)) ctx.log(`serve: ${message}`);
    yield `${JSON.stringify({ error: message })}\n`;
  }
}

export function batchRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/batches/:name',
    {
      schema: {
        summary: "A batch's progress, summed over its shards, and whether it has ended",
        description: 'Read from its shards (running: their progress query; closed: their result), whoever started it: the CLI, the client API or a schedule.',
        params: NameParams,
        response: {
          200: Json('{ name, ended, progress: { total, nextIndex, completed, failed, skipped, running, waitingApproval, waitingMessageBatch?, collectors? }, shards: [{ id, status, unread? }], links }'),
          400: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const viewer = viewerOf(callerOfRequest(request));
      const status = await visibleBatch(name, () => getBatchStatus(ctx.client, name, { viewer }));
      return { ...status, links: links(name) };
    },
  );

  // Typed without the zod provider: the 200 is a stream, which its typing of `send` does not take.
  app.get<{ Params: z.infer<typeof NameParams> }>(
    '/v1/batches/:name/results',
    {
      schema: {
        summary: "A batch's result lines as NDJSON, one per ended turn as it is fetched",
        description:
          'Finished or still running: a running batch gives the turns ended so far. Once a batch has ended, the answer waits (up to 30 s) for visibility to list every turn its shards finished.',
        params: NameParams,
        response: {
          200: { description: 'One JSON object per line.', content: { 'application/x-ndjson': { schema: ResultLineDoc } } },
          400: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const viewer = viewerOf(callerOfRequest(request));
      const results = await visibleBatch(name, () => getBatchResults(ctx.client, name, { viewer }));
      return reply
        .type('application/x-ndjson; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(Readable.from(ndjson(results.lines, ctx, name), { objectMode: false }));
    },
  );
}
