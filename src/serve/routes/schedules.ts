/**
 * Batch schedules over HTTP (src/client/batch-schedules.ts): `POST /v1/schedules` creates one for
 * the caller (its runs, their shards and turns carry the caller as owner), `GET /v1/schedules` lists
 * the caller's (an admin's: all), `GET /v1/schedules/{name}` describes one, `GET
 * /v1/schedules/{name}/runs` lists its runs with their batches and counts, `POST
 * /v1/schedules/{name}/trigger|pause|resume` act on it, `DELETE /v1/schedules/{name}` removes it.
 * Another caller's schedule is 404, as a name that names nothing. A schedule's runs start turns
 * without passing `serve`'s per-caller admission, so a caller whose role has limits may not create
 * one (403, naming the rule): the limits are never bypassed by a schedule.
 */
import type { Duration as TemporalDuration } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { BatchScheduleExistsError, InvalidBatchScheduleError } from '../../client/batch-schedule-errors';
import { listBatchScheduleRuns } from '../../client/batch-schedule-runs';
import {
  createBatchSchedule,
  deleteBatchSchedule,
  describeBatchSchedule,
  listBatchSchedules,
  pauseBatchSchedule,
  resumeBatchSchedule,
  triggerBatchSchedule,
  type BatchScheduleScope,
} from '../../client/batch-schedules';
import { NotFoundError } from '../../client/not-found';
import { BATCH_SCHEDULE_NAME_CHARACTERS, BATCH_SCHEDULE_OVERLAPS, MAX_BATCH_SCHEDULE_NAME_LENGTH } from '../../core/batch-schedule';
import { parseBatchQueries } from '../../schemas/batch-lines';
import { TurnOptionsSchema } from '../../schemas/turn-options';
import type { Caller } from '../caller';
import { HttpError, notFound } from '../http-error';
import { callerOfRequest } from '../request-guard';
import type { ServeContext } from '../serve-context';
import { ErrorBody, Json } from './schemas';

const ScheduleName = z
  .string()
  .min(1)
  .max(MAX_BATCH_SCHEDULE_NAME_LENGTH)
  .regex(BATCH_SCHEDULE_NAME_CHARACTERS, 'characters of A-Z a-z 0-9 . _ -')
  .describe(`The schedule's name (its runs' batches are <name>-<UTC time>): 1-${MAX_BATCH_SCHEDULE_NAME_LENGTH} characters of A-Z a-z 0-9 . _ -`);
const NameParams = z.object({ name: ScheduleName });
const Duration = z.union([z.number().int().positive(), z.string().min(1).max(40)]);

const CreateBody = z
  .object({
    name: ScheduleName,
    queries: z.array(z.unknown()).min(1).describe('The queries, each as a line of `mcp-turns batch`: { id?, question, ...overrides }.'),
    defaults: TurnOptionsSchema.optional().describe("Every query's options unless it sets its own (as the batch command's flags)."),
    concurrency: z.number().int().min(1).max(10_000).optional(),
    messageBatches: z.union([z.boolean(), z.strictObject({ deadlineMs: z.number().int().positive().optional() })]).optional(),
    every: Duration.optional().describe('A run every this long: milliseconds, or "30m", "2h", "1 day". Exactly one of every and cron.'),
    cron: z.string().min(1).max(200).optional().describe('A run at each time of this cron expression (UTC).'),
    overlap: z.enum(BATCH_SCHEDULE_OVERLAPS).optional().describe('A run due while the previous one still runs: skip (default), buffer-one, buffer-all, cancel-other, terminate-other, allow-all.'),
    catchupWindow: Duration.optional().describe('How late a missed run may still start (default 1 h).'),
    note: z.string().max(500).optional(),
  })
  .strict();
// No body at all is fine: Fastify gives null for it.
const TriggerBody = z.strictObject({ overlap: z.enum(BATCH_SCHEDULE_OVERLAPS).optional() }).nullish();
const NoteBody = z.strictObject({ note: z.string().max(500).optional() }).nullish();
const RunsQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).optional() });

/** Whose schedules the caller sees: their own, an admin's all. */
function scopeOf(caller: Caller): BatchScheduleScope {
  return caller.admin ? {} : { owner: caller.owner };
}

/** The client's refusals as HTTP answers: a bad option 400 naming it, a taken name 409, another's or no schedule 404. */
async function answering<T>(name: string | undefined, act: () => Promise<T>): Promise<T> {
  try {
    return await act();
  } catch (err) {
    if (err instanceof InvalidBatchScheduleError) throw new HttpError(400, `body.${err.field === 'items' ? 'queries' : err.field}: ${err.problem}`);
    if (err instanceof BatchScheduleExistsError) throw new HttpError(409, err.message);
    if (err instanceof NotFoundError) throw notFound(`batch schedule ${name ?? ''}`.trim());
    throw err;
  }
}

/** A caller whose role has limits may not create a schedule: its runs would start turns no admission counts. */
function refuseLimitedCaller(ctx: ServeContext, caller: Caller): void {
  const limits = caller.admin ? ctx.limits?.admin : ctx.limits?.user;
  if (limits && (limits.turnsInFlight !== undefined || limits.tokensPerDay !== undefined)) {
    throw new HttpError(403, `${caller.admin ? 'admins' : 'users'} here have per-caller limits, which a schedule's runs would not pass through: ask an operator to create the schedule (mcp-turns schedule add)`);
  }
}

export function scheduleRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const path = (name: string): string => `/v1/schedules/${encodeURIComponent(name)}`;

  r.post(
    '/v1/schedules',
    {
      schema: {
        summary: 'Creates a batch schedule for the caller: its queries run as a batch at each time it names',
        body: CreateBody,
        response: { 201: Json('The schedule as GET /v1/schedules/{name} describes it, with links'), 400: ErrorBody, 403: ErrorBody, 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const caller = callerOfRequest(request);
      refuseLimitedCaller(ctx, caller);
      const { name, queries, defaults, every, catchupWindow, ...options } = request.body;
      const { items, problems } = parseBatchQueries(queries, defaults ?? {});
      if (problems.length) throw new HttpError(400, `body.${problems.slice(0, 5).join('; body.')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`);
      // A duration as the body gives it: the client checks it and names the field when it is not one.
      const durations = {
        ...(every !== undefined ? { every: every as TemporalDuration } : {}),
        ...(catchupWindow !== undefined ? { catchupWindow: catchupWindow as TemporalDuration } : {}),
      };
      const view = await answering(name, () =>
        createBatchSchedule(ctx.client, { name, items, taskQueue: ctx.taskQueue, owner: caller.owner, ...withoutUndefined(options), ...durations }),
      );
      return reply.code(201).send({ ...view, links: { self: path(name), runs: `${path(name)}/runs` } });
    },
  );

  r.get(
    '/v1/schedules',
    { schema: { summary: "The caller's batch schedules (an admin's: all)", response: { 200: Json('{ schedules: [...] }') } } },
    async (request) => ({ schedules: await listBatchSchedules(ctx.client, scopeOf(callerOfRequest(request))) }),
  );

  r.get(
    '/v1/schedules/:name',
    { schema: { summary: 'A batch schedule: when it runs, its queries count, its recent runs', params: NameParams, response: { 200: Json('The schedule'), 400: ErrorBody, 404: ErrorBody } } },
    async (request) => {
      const { name } = request.params;
      const view = await answering(name, () => describeBatchSchedule(ctx.client, name, scopeOf(callerOfRequest(request))));
      return { ...view, links: { self: path(name), runs: `${path(name)}/runs` } };
    },
  );

  r.get(
    '/v1/schedules/:name/runs',
    {
      schema: {
        summary: "A batch schedule's runs, newest first: each one's batch (its results: GET /v1/batches/{batch}/results), start, status and counts",
        params: NameParams,
        querystring: RunsQuery,
        response: { 200: Json('{ runs: [{ workflowId, runId, batch, status, startTime, closeTime?, counts?, error? }] }'), 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const { name } = request.params;
      const scope = scopeOf(callerOfRequest(request));
      const runs = await answering(name, () => listBatchScheduleRuns(ctx.client, name, { ...scope, ...(request.query.limit ? { limit: request.query.limit } : {}) }));
      return { runs: runs.map((run) => ({ ...run, links: { batch: `/v1/batches/${encodeURIComponent(run.batch)}`, results: `/v1/batches/${encodeURIComponent(run.batch)}/results` } })) };
    },
  );

  r.post(
    '/v1/schedules/:name/trigger',
    {
      schema: {
        summary: "Runs the schedule now, under its own overlap policy unless the body names one (a run while one runs is skipped by default)",
        params: NameParams,
        body: TriggerBody,
        response: { 202: Json('{ triggered: true }'), 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const overlap = request.body?.overlap;
      await answering(name, () => triggerBatchSchedule(ctx.client, name, { ...scopeOf(callerOfRequest(request)), ...(overlap ? { overlap } : {}) }));
      return reply.code(202).send({ triggered: true });
    },
  );

  for (const action of ['pause', 'resume'] as const) {
    r.post(
      `/v1/schedules/:name/${action}`,
      { schema: { summary: `${action === 'pause' ? 'Pauses' : 'Resumes'} the schedule (with a note)`, params: NameParams, body: NoteBody, response: { 200: Json(`{ ${action}d: true }`), 400: ErrorBody, 404: ErrorBody } } },
      async (request) => {
        const { name } = request.params;
        const note = request.body?.note;
        const options = { ...scopeOf(callerOfRequest(request)), ...(note ? { note } : {}) };
        await answering(name, () => (action === 'pause' ? pauseBatchSchedule : resumeBatchSchedule)(ctx.client, name, options));
        return { [`${action}d`]: true };
      },
    );
  }

  r.delete(
    '/v1/schedules/:name',
    { schema: { summary: 'Deletes the schedule (its runs so far stay, with their batches)', params: NameParams, response: { 200: Json('{ deleted: true }'), 400: ErrorBody, 404: ErrorBody } } },
    async (request) => {
      const { name } = request.params;
      await answering(name, () => deleteBatchSchedule(ctx.client, name, scopeOf(callerOfRequest(request))));
      return { deleted: true };
    },
  );
}

/** `options` without the keys whose value is undefined (the client's options are exact). */
function withoutUndefined<T extends Record<string, unknown>>(options: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}
