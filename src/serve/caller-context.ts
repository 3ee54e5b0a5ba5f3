/**
 * Who a turn `serve` starts is for: every turn and every conversation message `serve` starts
 * carries its caller in its context: `context.user` is the caller's name (a token's name, a JWT's
 * subject, or `local user` without sign-in), and `context.userIssuer` a JWT's issuer. A body's own
 * context is kept, but these two are always the caller's: nobody can start a turn as someone else.
 *
 * A caller who signed in (a token or a JWT) is also the turn's `userId` (Anthropic's
 * `metadata.user_id`): their owner key, opaque, over any `userId` of the body. The local user is
 * nobody in particular, so without sign-in a body's `userId` is kept.
 */
import type { TurnOptions } from '../core/conversation';
import { signedIn, type Caller } from './caller';

/** `options` (a turn's input or a message's options) with `context.user` (and `userIssuer`), and `userId` for a signed-in caller, set from `caller`. */
export function withCaller<T extends Pick<TurnOptions, 'context' | 'userId'>>(options: T, caller: Caller): T & Pick<TurnOptions, 'userId'> {
  const { userIssuer: _theirs, ...context } = options.context ?? {};
  return {
    ...options,
    context: { ...context, user: caller.name, ...(caller.issuer !== undefined ? { userIssuer: caller.issuer } : {}) },
    ...(signedIn(caller) ? { userId: caller.owner.key } : {}),
  };
}
