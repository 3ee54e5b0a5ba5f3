/** Shapes several routes share, as the OpenAPI document shows them. */
import { z } from 'zod';
import { IdSchema } from '../../schemas/ids';
import { TurnOptionsSchema } from '../../schemas/turn-options';

export const ErrorBody = z.object({ error: z.string().describe('What was refused, in one line.') });

/** A JSON answer as the route's summary describes it. */
export const Json = (description: string) => z.any().describe(description);

/** A turn's options (a turn's input without question and history: model, system, servers, maxSteps, tools, approval…). */
export const TurnOptionsBody = TurnOptionsSchema.describe("This message's turn options: a turn's input but its question and history");

/** A path's id: any id that can exist (a turn's, a conversation's). */
export const IdParams = z.object({ id: IdSchema });
