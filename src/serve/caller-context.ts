/**
 * Who a turn `serve` starts is for: every turn and every conversation message `serve` starts
 * carries its caller in its context, `context.user` = the request's actor (the token's name, or
 * `local user` without tokens: who approves, src/serve/request-guard.ts). A body's own context is
 * kept, but its `user` is always the caller's: nobody can start a turn as someone else.
 */
import type { TurnOptions } from '../core/conversation';

/** `options` (a turn's input or a message's options) with `context.user` set to `actor`. */
export function withCaller<T extends Pick<TurnOptions, 'context'>>(options: T, actor: string): T {
  return { ...options, context: { ...options.context, user: actor } };
}
