/**
 * The shapes that cross the workflow/activity boundary. Everything here is recorded in workflow
 * history, so nothing secret may ever be part of these types: server commands, URLs, headers, API
 * keys and injected values stay in the worker's configuration.
 */
import type { InputRequired, InputResponse } from './input-requests';
import type {
  ContentBlock,
  ContentBlockParam,
  MessageParam,
  TextBlockParam,
  ImageBlockParam,
  Tool,
  ToolUnion,
  ToolChoice,
  StopReason,
  ThinkingConfigParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { TokenUsage } from './usage';
import type { Artifact } from './response';
import type { FormatterOutput } from '../schemas/response-formatter-tool';
import type { StreamRecord, StreamRequest } from './stream-record';
import type { AskedAgain } from './activity-types';
import type { TurnContext } from './context-templates';
import type { ServerToolDefinition, ServerToolsInput, ToolSearchMode } from './server-tools';
import type { CacheControls, Effort, ToolChoiceInput } from './request-controls';
import type { OutputPath, OutputReport, OutputSpec } from './output-spec';

export type { ContentBlock, ContentBlockParam, MessageParam, Tool, ToolUnion, ToolChoice, StopReason, ThinkingConfigParam };

/** A JSON Schema object as MCP servers publish it in `inputSchema`. */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, unknown>; required?: string[] } & Record<
  string,
  unknown
>;

/** A tool a server lists that cannot be offered to Claude (its input schema, for one), and why. */
export interface UnusableTool {
  /** Configured server name. */
  server: string;
  /** The tool's own name on that server. */
  name: string;
  reason: string;
}

/** A listed tool's approval requirement (the worker's config): its calls wait for a person. */
export interface ToolApproval {
  /** Without a decision in this time the call is denied; none = wait as long as it takes. */
  timeoutMs?: number;
}

/** One tool as a server lists it (after the server's allowed/exclude filters). */
export interface McpToolDescriptor {
  /** Configured server name. */
  server: string;
  /** The tool's own name on that server (up to 128 chars, may contain `.`). */
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchemaObject;
  /** Set when the worker's config says a call of this tool waits for a person's approval. */
  approval?: ToolApproval;
}

export interface ListToolsInput {
  /** Server (and tool module) names to list; undefined = every configured one. */
  servers?: string[];
  /** The turn's context: a server whose `inject` needs a value it does not set is unavailable. */
  context?: TurnContext;
}

export interface ServerUnavailable {
  server: string;
  /** Human-readable reason, e.g. "circuit open, next probe in 24 s" or "connect failed: ECONNREFUSED". */
  reason: string;
}

/**
 * How the workflow should schedule `callTool` for one server: the worker's per-server config, minus
 * anything secret. Recorded once per turn with the tool list, so replay does not depend on config.
 */
export interface ServerCallPolicy {
  /**
   * Tools (server-side names) whose calls run as local activities: in the worker that runs the turn,
   * within the workflow task that read Claude's reply, only their results in history. The others'
   * calls are activities of their own (progress as heartbeat details, a cancellation reaching them
   * within seconds, the turn's progress readable while they run). Chosen by the worker when it lists
   * the tools (src/mcp/tool-speed.ts), so replay does not depend on it.
   */
  localTools: string[];
  /**
   * Tools of this server the worker has not seen called yet (`local_activity: auto`): a batch's turn
   * runs them locally too (it is there for throughput; nobody reads its progress during a call),
   * which a batch started at once needs, its turns being listed before any call has ended.
   */
  unseenTools?: string[];
  /** Activity start-to-close; always above the MCP request timeout. */
  startToCloseTimeoutMs: number;
  /** Heartbeat timeout (progress notifications and a periodic beat keep it alive). */
  heartbeatTimeoutMs: number;
  retry: { maximumAttempts: number; initialIntervalMs: number; backoffCoefficient: number; maximumIntervalMs: number };
  /** How long a call waits for a person to answer the server's questions before it declines them (absent: the default). */
  inputTimeoutMs?: number;
}

/** The tools of a set of servers, as the worker's MCP pool lists them. */
export interface ToolListing {
  tools: McpToolDescriptor[];
  /** Scheduling policy per listed server name. */
  policies: Record<string, ServerCallPolicy>;
  /** Servers that were asked for but could not be listed. The turn goes on without their tools. */
  unavailable: ServerUnavailable[];
  /** Names in `servers` that the worker's config does not know. */
  unknownServers: string[];
  /** Listed tools that cannot be offered to Claude; the turn reports them in `droppedTools`. */
  unusableTools?: UnusableTool[];
}

/**
 * What the worker decides for a turn: the model and the tools per Claude request when the turn
 * names none (its config's `claude.model` and `claude.maxToolsPerRequest`), and whether the turn's unstreamed Claude calls run on the turn's own task queue.
 */
export interface WorkerTurnDefaults {
  model?: string;
  /** Tools per Claude request for turns that set none (the config's `claude.maxToolsPerRequest`). */
  maxToolsPerRequest?: number;
  /**
   * True when the worker's config caps Claude calls per worker only (no `claude.rateLimitPerSecond`):
   * they then run on the turn's queue, dispatched eagerly in the workflow task that schedules them
   * (src/core/task-queues.ts).
   */
  claudeOnTurnQueue?: boolean;
  /** Claude's own tools every turn is offered (the config's `claude.serverTools`). */
  serverTools?: ServerToolsInput;
  /** How turns that set none offer the tools beyond maxToolsPerRequest (`claude.toolSearch`). */
  toolSearch?: ToolSearchMode;
  /** Tools every turn loads up front (`claude.alwaysLoad`). */
  alwaysLoad?: string[];
  /** Request controls for turns that set none (`claude.effort`, `stopSequences`, `toolChoice`, `cache`). */
  effort?: Effort;
  stopSequences?: string[];
  toolChoice?: ToolChoiceInput;
  cache?: CacheControls;
}

/** What a Claude tool name calls. */
export interface ToolTarget {
  server: string;
  tool: string;
}

export interface DroppedTool {
  name: string;
  reason: string;
}

/** A tool offered to Claude: one of the turn's (an MCP server's or a module's), or one of the API's own. */
export type OfferedTool = Tool | ServerToolDefinition;

/** The tools a turn offers Claude (src/core/tool-naming.ts builds it). */
export interface ToolCatalog {
  /**
   * Tool definitions for the Claude request, in a stable order: the turn's tools, then Claude's own
   * server tools (src/core/server-tools.ts), which have no target.
   */
  tools: OfferedTool[];
  /** Claude tool name → the MCP server and tool it calls. */
  targets: Record<string, ToolTarget>;
  /** Tools not offered to Claude, and why. */
  dropped: DroppedTool[];
  /** Tools sent with defer_loading, found by tool search (absent: none), by Claude name. */
  deferred?: string[];
}

/**
 * What the turn's start (`prepareTurn`) decides and records, so neither replay nor a reader of the
 * history decides it again: the input was checked, the tools Claude is offered (under which names,
 * calling what) and those left out, the approval each needs, the listed servers' call policies,
 * and the worker's defaults for what the input leaves unset. Made by `prepareTurnOf`
 * (src/core/turn-toolset.ts).
 */
export interface PreparedTurn extends Omit<ToolListing, 'tools' | 'unusableTools'> {
  catalog: ToolCatalog;
  /** Claude tool name → the approval its calls wait for; a tool absent here runs at once. */
  approvals: Record<string, ToolApproval>;
  workerDefaults: WorkerTurnDefaults;
  /** The Claude name of the tool the turn's `toolChoice` forces (absent: it names none). */
  forcedTool?: string;
}

export interface CallToolInput {
  /** The MCP server, or the tool module, that has the tool. */
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** Claude's tool_use id, for logs and MCP progress tokens. */
  toolUseId: string;
  /** The turn's context (absent: none): a code tool's `ctx.context`, an MCP server's `inject` templates. */
  context?: TurnContext;
  /** A call sent again after the server asked for input (src/core/input-requests.ts): the person's answers, by request key. */
  inputResponses?: Record<string, InputResponse>;
  /** …and the server's opaque state, exactly as it sent it. */
  requestState?: string;
}

/** Content that can go into a tool_result block. */
export type ToolResultContent = TextBlockParam | ImageBlockParam;

export interface CallToolOutput {
  content: ToolResultContent[];
  /** True for a tool-level failure (MCP `isError`), an open circuit, or bad arguments. */
  isError: boolean;
  /** Images and binary resources the tool returned, kept for the final answer (absent: none). */
  artifacts?: Artifact[];
  /** Bytes removed by the per-result size cap (absent: nothing was cut). */
  truncatedBytes?: number;
  /** The activity attempt that produced this result (set by the activity). */
  attempt?: number;
  /**
   * How long that attempt took, by the clock of the worker that ran it (set by the activity): each
   * call's own time, where the workflow's clock gives every call of a workflow task the same end.
   */
  durationMs?: number;
  /**
   * The server asked for a person's input before it can answer (2026-07-28 `input_required`):
   * `content` is empty; the turn asks and sends the call again with the answers.
   */
  inputRequired?: InputRequired;
  /**
   * The call's tool_use id (set by the activity): history records a local activity's result but not
   * its input, and a turn's stream reads which call it answers from here.
   */
  toolUseId?: string;
}

/** What a turn's request controls set on each of its calls (src/core/request-controls.ts). */
export interface CallControls {
  /** `output_config.effort`. */
  effort?: Effort;
  /** The prompt-cache breakpoints' lifetimes. */
  cache?: CacheControls;
  /** `metadata.user_id`. */
  userId?: string;
}

/** A Claude Messages request as the worker makes it: the activity input with its conversation read. */
export interface ClaudeRequest extends CallControls {
  model: string;
  system?: string;
  messages: MessageParam[];
  tools: ToolUnion[];
  maxTokens: number;
  toolChoice?: ToolChoice;
  thinking?: ThinkingConfigParam;
  /** The code execution container of the turn's earlier calls, to go on in. */
  container?: string;
  stopSequences?: string[];
  /** `output_config.format`: the answer in a JSON schema (structured outputs). */
  outputFormat?: { type: 'json_schema'; schema: Record<string, unknown> };
}

/**
 * The `claude` activity's input: one Claude call of the loop. The conversation and the tools come
 * as transcript segments, the activity's further arguments (src/core/transcript-segment.ts).
 */
export interface ClaudeCallInput extends CallControls {
  model: string;
  system?: string;
  maxTokens: number;
  thinking?: ThinkingConfigParam;
  /** This call's `tool_choice` (the turn's `toolChoice` on its first call, or on every one). */
  toolChoice?: ToolChoice;
  stopSequences?: string[];
  /** 1-based loop step, for logs. */
  step: number;
  /** The turn streams: the call publishes its deltas (src/core/stream-record.ts). */
  stream?: StreamRequest;
  /**
   * Set when this step's call is asked again: why the workflow did not use the call before it. The
   * history records the decision, so its readers (the stream) need not derive it again.
   */
  askedAgain?: AskedAgain;
  /** The code execution container an earlier call of the turn ran in: the call goes on in it. */
  container?: string;
}

export interface ClaudeCallOutput {
  /** The assistant content, unchanged: it is sent back byte-for-byte. */
  content: ContentBlock[];
  stopReason: StopReason | null;
  usage: TokenUsage;
  model: string;
  requestId?: string;
  /** Cost of this call from the worker's price table (0 for unknown models). */
  costUsd?: number;
  /** What the call streamed, when the turn streams. */
  stream?: StreamRecord;
  /** The code execution container the call ran in (a reply that ran code has one). */
  container?: string;
  /** The stop sequence the reply ended at (`stopReason: "stop_sequence"`). */
  stopSequence?: string;
}

/**
 * The `formatResponse` activity's input: the formatter call. The conversation comes as transcript
 * segments, the activity's further arguments (the turn's tools are not offered to the formatter).
 */
export interface FormatResponseInput extends CallControls {
  model: string;
  system?: string;
  maxTokens: number;
  /** With extended thinking on, forced tool_choice is refused by the API, so use the auto path. */
  thinking?: ThinkingConfigParam;
  /** The turn streams: the call publishes the answer as it is written. */
  stream?: StreamRequest;
  /**
   * Tools sent beside the formatter's own, since the API refuses a transcript whose blocks name a
   * tool the request does not define: the turn's server tools, and the deferred tools a tool search
   * found (still deferred).
   */
  tools?: OfferedTool[];
  /** The code execution container the turn's calls ran in. */
  container?: string;
  /** The turn's `output`: the call writes a JSON answer in this shape instead (src/claude/output-writer.ts). */
  output?: OutputSpec;
}

/** The formatter's request as the worker makes it: the activity input with its conversation read. */
export type FormatRequest = FormatResponseInput & { messages: MessageParam[] };

/**
 * How the answer's call arrived at its answer: the formatter's modes, or, for a turn's typed
 * `output`, the path that wrote it (src/core/output-spec.ts).
 */
export type FormatMode = 'forced' | 'repaired' | 'auto' | 'fallback' | OutputPath;

export interface FormatResponseOutput {
  output: FormatterOutput;
  mode: FormatMode;
  usage: TokenUsage;
  /** Claude calls made (1 normally, 2 with a repair or a fallback to auto). */
  calls: number;
  /** Why a repair or fallback happened. */
  notes: string[];
  /** Cost of the formatter's calls from the worker's price table. */
  costUsd?: number;
  /** What the call streamed, when the turn streams. */
  stream?: StreamRecord;
  /** With the input's `output`: the JSON answer (absent when none validates) and how it was written. */
  typed?: { output?: unknown; report: OutputReport };
}

