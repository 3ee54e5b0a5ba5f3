/** A message's turn options over its conversation's: field by field, the context key by key. */
import { messageTurnOptions } from '../../src/core/conversation';

it('takes the message\'s options over the conversation\'s field by field, and merges their contexts key by key', () => {
  expect(messageTurnOptions({ model: 'a', maxSteps: 3 }, { model: 'b' })).toEqual({ model: 'b', maxSteps: 3 });
  expect(messageTurnOptions({ context: { tenant: 'acme', user: 'x' } }, { context: { user: 'bob' } })).toEqual({ context: { tenant: 'acme', user: 'bob' } });
  expect(messageTurnOptions({ context: { tenant: 'acme' } }, { model: 'b' })).toEqual({ context: { tenant: 'acme' }, model: 'b' });
  expect(messageTurnOptions(undefined, { context: { user: 'bob' } })).toEqual({ context: { user: 'bob' } });
  expect(messageTurnOptions(undefined, undefined)).toEqual({});
});
