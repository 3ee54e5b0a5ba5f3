// The workflow bundle's entry: every workflow type the worker registers.
export { chatTurn, progressQuery, transcriptQuery } from './chat-turn';
export { chatBatch, batchProgressQuery } from './batch';
