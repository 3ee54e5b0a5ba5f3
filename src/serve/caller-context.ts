/**
 * Who a turn `serve` starts is for: every turn and every conversation message `serve` starts
 * carries its caller in its context: `context.user` is the caller's name (a token's name, a JWT's
 * subject, or `local user` without sign-in), and `context.userIssuer` a JWT's issuer. A body's own
 * context is kept, but these two are always the caller's: nobody can start a turn as someone else.
 */
import type { TurnOptions } from '../core/conversation';
import type { Caller } from './caller';

/** `options` (a turn's input or a message's options) with `context.user` (and `userIssuer`) set from `caller`. */
export function withCaller<T extends Pick<TurnOptions, 'context'>>(options: T, caller: Caller): T {
  const { userIssuer: _theirs, ...context } = options.context ?? {};
  return { ...options, context: { ...context, user: caller.name, ...(caller.issuer !== undefined ? { userIssuer: caller.issuer } : {}) } };
}
