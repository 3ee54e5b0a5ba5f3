/** The queue Claude activities run on, derived from the turn's own task queue. */
export function claudeTaskQueue(turnTaskQueue: string): string {
  return `${turnTaskQueue}-claude`;
}
