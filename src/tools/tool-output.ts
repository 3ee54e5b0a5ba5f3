/**
 * What a code tool returns, as an MCP tool result (src/mcp/result-conversion.ts then makes Claude's
 * content of it, with the same size caps as a server's results): a string is text; content blocks or
 * an MCP-style `{ content, isError }` are taken as they are; any other value is its JSON; nothing is
 * "(no output)". The AI SDK's `toModelOutput` forms are read too.
 */
import type { McpCallResult, McpContent } from '../mcp/result-conversion';

const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'resource', 'resource_link']);

function isContentBlock(v: unknown): v is McpContent {
  return typeof v === 'object' && v !== null && CONTENT_TYPES.has((v as { type?: unknown }).type as string);
}

function isContentList(v: unknown): v is McpContent[] {
  return Array.isArray(v) && v.length > 0 && v.every(isContentBlock);
}

function text(value: string, isError = false): McpCallResult {
  return { content: [{ type: 'text', text: value }], isError };
}

/** JSON of any value; one that cannot be JSON (a cycle, a BigInt) is said as such. */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);
  } catch (err) {
    return `(the tool returned a value that is not JSON: ${(err as Error).message})`;
  }
}

/** A code tool's return value as an MCP tool result (see the file comment). */
export function mcpResultOf(output: unknown): McpCallResult {
  if (output === undefined) return text('(no output)');
  if (typeof output === 'string') return text(output);
  if (isContentList(output)) return { content: output, isError: false };
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
    const o = output as { content?: unknown; isError?: unknown };
    if (Array.isArray(o.content) && o.content.every(isContentBlock)) return { content: o.content, isError: o.isError === true };
  }
  return text(jsonText(output));
}

/** A part of the AI SDK's `{ type: 'content' }` output. */
type ModelContentPart = { type: string; text?: string; data?: string; mediaType?: string };

/**
 * The AI SDK's `toModelOutput` result (`ToolResultOutput`) as an MCP tool result: text and JSON,
 * their error forms (`isError`), `execution-denied`, and `content` parts of text and base64 images;
 * other parts (files by URL, provider references) are named in a text block instead.
 */
export function modelOutputResult(output: unknown): McpCallResult {
  const o = (output ?? {}) as { type?: string; value?: unknown; reason?: string };
  switch (o.type) {
    case 'text':
      return text(String(o.value ?? ''));
    case 'json':
      return text(jsonText(o.value));
    case 'error-text':
      return text(String(o.value ?? ''), true);
    case 'error-json':
      return text(jsonText(o.value), true);
    case 'execution-denied':
      return text(`Not run: execution denied${o.reason ? `: ${o.reason}` : ''}`, true);
    case 'content': {
      const parts = Array.isArray(o.value) ? (o.value as ModelContentPart[]) : [];
      const content: McpContent[] = parts.map((p) => {
        if (p.type === 'text') return { type: 'text', text: p.text ?? '' };
        if ((p.type === 'media' || p.type === 'image-data') && p.data && p.mediaType?.startsWith('image/')) {
          return { type: 'image', data: p.data, mimeType: p.mediaType };
        }
        return { type: 'text', text: `(a ${p.type} part the worker cannot pass to Claude)` };
      });
      return { content, isError: false };
    }
    default:
      return text(jsonText(output));
  }
}
