/**
 * The one vocabulary of a turn's or a conversation's status, in every place that names one: the
 * client and the CLI, stream events, the HTTP API, the chat page and the `McpTurnsStatus` search
 * attribute. Words are lower case, `_` between words (Temporal's own names, lower-cased).
 */

/** A person's approval is awaited: a running turn's status while one of its calls waits. */
export const WAITING_APPROVAL_STATUS = 'waiting_approval';

/** How a turn or conversation ended. */
export const END_STATUSES = ['completed', 'failed', 'cancelled', 'terminated', 'timed_out'] as const;

export type EndStatus = (typeof END_STATUSES)[number];

/** Every status, running ones first. */
export const RUN_STATUSES = ['running', WAITING_APPROVAL_STATUS, ...END_STATUSES] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];
