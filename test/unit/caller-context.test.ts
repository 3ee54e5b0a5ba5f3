/**
 * What `serve` puts in a turn's input (or a message's options) from its caller: `context.user`
 * (and `userIssuer`) always the caller's; `userId` the signed-in caller's opaque owner key, over
 * the body's; without sign-in (the local user), the body's `userId` kept.
 */
import { jwtCaller, LOCAL_CALLER, signedIn, tokenCaller } from '../../src/serve/caller';
import { withCaller } from '../../src/serve/caller-context';
import { UserIdSchema } from '../../src/schemas/request-controls';

test("a token's holder: userId is their owner key, over the body's", () => {
  const alice = tokenCaller('alice', false);
  const input = withCaller({ question: 'q', userId: 'someone-else', context: { user: 'mallory', tenant: 't1' } }, alice);
  expect(input).toEqual({ question: 'q', userId: alice.owner.key, context: { user: 'alice', tenant: 't1' } });
  expect(input.userId).toMatch(/^o[A-Za-z0-9_-]{32}$/);
  // Opaque, as metadata.user_id must be: no name, no e-mail address.
  expect(UserIdSchema.safeParse(input.userId).success).toBe(true);
});

test("a JWT's subject: userId is their owner key, set without a body's; the issuer is in the context", () => {
  const bob = jwtCaller('https://id.example.com', 'bob@example.com', false);
  const options = withCaller({ model: 'claude-sonnet-4-6', context: { userIssuer: 'forged' } }, bob);
  expect(options).toEqual({
    model: 'claude-sonnet-4-6',
    userId: bob.owner.key,
    context: { user: 'bob@example.com', userIssuer: 'https://id.example.com' },
  });
  expect(options.userId).not.toContain('bob');
  expect(UserIdSchema.safeParse(options.userId).success).toBe(true);
  // Two identities, two ids: the same name signed in two ways is two people.
  expect(withCaller({}, tokenCaller('bob@example.com', false)).userId).not.toBe(options.userId);
});

test("the local user (no sign-in): the body's userId is kept, none is made up", () => {
  expect(signedIn(LOCAL_CALLER)).toBe(false);
  expect(withCaller({ userId: 'u-42' }, LOCAL_CALLER)).toEqual({ userId: 'u-42', context: { user: 'local user' } });
  expect(withCaller({}, LOCAL_CALLER)).toEqual({ context: { user: 'local user' } });
  // A token named as the local user is still someone who signed in.
  expect(signedIn(tokenCaller('local user', true))).toBe(true);
});
