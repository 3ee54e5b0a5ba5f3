/**
 * The queries of mcp-turns' workflows, defined once: workflows register handlers for them and the
 * client asks them by these definitions, so a renamed query fails to compile instead of at run time.
 * Queries leave no trace in history.
 */
import { defineQuery } from '@temporalio/workflow';
import type { BatchProgress } from './batch';
import type { TranscriptSnapshot } from './contracts';
import type { TurnProgress } from './turn-result';

/** A turn's live progress: phase, step, tool calls so far, usage. */
export const turnProgressQuery = defineQuery<TurnProgress>('progress');
/** The first N messages of a turn's transcript, with its tools: how Claude activities read the conversation. */
export const transcriptQuery = defineQuery<TranscriptSnapshot, [number]>('transcript');
/** A batch's counts and per-item states. */
export const batchProgressQuery = defineQuery<BatchProgress>('batchProgress');
