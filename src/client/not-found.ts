/** An id or a name that names nothing in the namespace: no turn, conversation or batch by it. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}
