/**
 * `serve`'s HTTP application: Fastify with zod-checked routes, documented at `/openapi.json`.
 * Every request passes the guard first (src/serve/request-guard.ts: Host, Origin, bearer token on
 * every route not declared open), CORS (the allowed origins only), the rate limit (per valid token,
 * else per client address: refused attempts count) and the body limits (413 past its size, 400
 * past its depth). The routes keep nothing between requests.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import { createJsonSchemaTransform, createJsonSchemaTransformObject, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_ID_LENGTH } from '../core/input-limits';
import { JsonValueSchema } from '../schemas/turn-input';
import { legacySamplingFields } from '../schemas/request-controls';
import { LEGACY_SAMPLING_MESSAGE } from '../core/request-controls';
import { clientErrorReply, errorReply, HttpError, pathOf, routerErrorReply } from './http-error';
import { useBoundedJsonParser } from './json-body';
import { allowedHostsOf, guardRequests, originAllowed } from './request-guard';
import type { ServeContext } from './serve-context';
import { authRequired, type ServeSettings } from '../config/serve-settings';
import { approvalRoutes } from './routes/approvals';
import { batchRoutes } from './routes/batches';
import { scheduleRoutes } from './routes/schedules';
import { chatRoutes } from './routes/chat';
import { conversationRoutes } from './routes/conversations';
import { pageRoutes } from './routes/page';
import { turnRoutes } from './routes/turns';
import { usageRoutes } from './routes/usage';

export interface ServeAppOptions extends ServeContext {
  settings: ServeSettings;
  /** The package version, shown in /v1/info and the OpenAPI document. */
  version: string;
  /**
   * The MCP servers (by name) of the worker that runs this process's work, when that worker is this
   * process's own; absent when the work goes to a worker elsewhere, whose servers are not known here.
   */
  servers?: readonly string[];
}

/** What the OpenAPI document adds to a schema: a component's name, or what a field is. */
type DocumentedAs = { id?: string; description?: string; deprecated?: boolean; not?: Record<string, never> };

/**
 * The schemas the OpenAPI document names as components: a recursive schema has to be one, else its
 * `$ref` would name nothing. The legacy sampling fields are accepted only to be refused by name:
 * documented as taking no value, deprecated, with the line that refuses them.
 */
function documentedSchemas(): z.core.$ZodRegistry<DocumentedAs> {
  const registry = z.registry<DocumentedAs>();
  registry.add(JsonValueSchema, { id: 'JsonValue' });
  for (const field of new Set(Object.values(legacySamplingFields))) registry.add(field, { description: `Refused: ${LEGACY_SAMPLING_MESSAGE}.`, deprecated: true, not: {} });
  return registry;
}

export async function buildServeApp(opts: ServeAppOptions): Promise<FastifyInstance> {
  const { settings } = opts;
  const app = Fastify({
    logger: false,
    bodyLimit: settings.bodyLimitBytes,
    forceCloseConnections: true,
    // Every id a route reads may be as long as ids are accepted (the router measures it decoded).
    routerOptions: { maxParamLength: MAX_ID_LENGTH },
    frameworkErrors: routerErrorReply,
    clientErrorHandler: clientErrorReply,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorReply(settings.bodyLimitBytes, opts.log, opts.namespace));
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: `no route ${request.method} ${pathOf(request)}` }));
  useBoundedJsonParser(app);
  app.decorate('sseLimits', { stalledMs: settings.stalledStreamSeconds * 1000, log: opts.log });
  const port = (): number => (app.server.address() as AddressInfo | null)?.port ?? settings.port;

  guardRequests(app, settings, port);
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin === undefined || originAllowed(settings, allowedHostsOf(settings, port()), origin)),
    methods: ['GET', 'POST'],
    allowedHeaders: ['content-type', 'authorization', 'last-event-id', 'accept'],
    exposedHeaders: ['x-vercel-ai-ui-message-stream'],
    maxAge: 600,
    // A preflight without Access-Control-Request-Method is answered as any other (no body to refuse
    // in another shape than `{ error }`); the browser decides from the headers.
    strictPreflight: false,
  });
  await app.register(rateLimit, {
    max: settings.rateLimit.max,
    timeWindow: settings.rateLimit.windowSeconds * 1000,
    keyGenerator: (request) => (request.caller !== undefined ? `owner:${request.caller.owner.key}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, `rate limit: ${context.max} requests per ${settings.rateLimit.windowSeconds} s; retry in ${Math.ceil(context.ttl / 1000)} s`),
  });
  const schemaRegistry = documentedSchemas();
  await app.register(swagger, {
    openapi: {
      info: { title: 'mcp-turns serve', version: opts.version, description: 'Durable Claude tool-use turns over HTTP; /api/chat speaks the AI SDK UI message stream.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      ...(authRequired(settings) ? { security: [{ bearer: [] }] } : {}),
    },
    transform: createJsonSchemaTransform({ schemaRegistry }),
    transformObject: createJsonSchemaTransformObject({ schemaRegistry }),
  });

  app.get('/openapi.json', { schema: { hide: true }, config: { open: true } }, async () => app.swagger());
  app.get('/v1/info', { schema: { summary: 'What the chat page needs to know' }, config: { open: true } }, async (request) => ({
    namespace: opts.namespace,
    uiUrl: opts.uiUrl,
    authRequired: authRequired(settings),
    version: opts.version,
    // Who the request's credentials name, so the page can say who is signed in (and, to an admin, whose is whose).
    ...(request.caller ? { caller: { name: request.caller.name, admin: request.caller.admin, ...(request.caller.issuer ? { issuer: request.caller.issuer } : {}) } } : {}),
    // The page suggests questions about these servers; without them it suggests none. The route
    // is open (the page reads it before sign-in): what the worker offers is told only to a caller
    // who signed in, when sign-in is required.
    ...(opts.servers && request.caller !== undefined ? { servers: [...opts.servers] } : {}),
  }));
  const ctx: ServeContext = { ...opts, limits: settings.limits };
  turnRoutes(app, ctx);
  conversationRoutes(app, ctx);
  approvalRoutes(app, ctx);
  batchRoutes(app, ctx);
  scheduleRoutes(app, ctx);
  chatRoutes(app, ctx);
  usageRoutes(app, ctx);
  pageRoutes(app);
  return app;
}
