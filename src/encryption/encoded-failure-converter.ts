/**
 * The failure converter used while encryption is on: a failure's message and stack go into its
 * encoded attributes, a payload the codec encrypts, so the server keeps only "Encoded failure".
 * Loaded by path (Temporal's data converter takes failure converters that way), in the worker and
 * in the workflow bundle built for encryption (src/worker/workflow-bundle.ts).
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
