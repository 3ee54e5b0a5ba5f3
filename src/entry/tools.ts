/**
 * `mcp-turns/tools`: what a module of tools written in code imports. Light on purpose: no worker, no
 * Temporal and no schema library is loaded (a module brings its own, zod or another Standard Schema).
 */
export {
  defineTool,
  ToolError,
  type DefinedTool,
  type JsonObjectSchema,
  type JsonValue,
  type ToolApprovalOption,
  type ToolContentBlock,
  type ToolContext,
  type ToolDefinition,
  type ToolInput,
  type ToolInputSchema,
  type ToolOutput,
} from '../tools/define-tool';
