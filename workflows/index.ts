// The workflow bundle's entry: every workflow type the worker registers.
export { chatTurn } from './chat-turn';
export { chatBatch } from './batch';
export { conversation } from './conversation';
export { messageBatchCollector } from './message-batch-collector';
export { usageLedger } from './usage-ledger';
export { scheduledBatch } from './scheduled-batch';
