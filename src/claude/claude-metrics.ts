/** What a Claude call reports to the worker's metrics (src/worker/metrics.ts makes one). */
import type { TokenUsage } from '../core/usage';

export interface ClaudeMetrics {
  record(kind: 'claude' | 'formatter', model: string, usage: TokenUsage, outcome: string): void;
}
