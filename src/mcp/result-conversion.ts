/**
 * MCP tool results → Claude `tool_result` content (pure). Text stays text; images become image blocks
 * and artifacts; audio a placeholder; embedded resources their text or, when binary, an artifact;
 * resource links their URI; `structuredContent` JSON text when there is no text. One size cap per
 * result keeps the head and the tail of the text with an explicit marker and never cuts an image;
 * binary data over its own budget is dropped whole, because results are recorded in workflow history
 * and Temporal refuses payloads over 2 MB (retrying forever).
 */
import type { CallToolOutput, ToolResultContent } from '../core/contracts';
import type { Artifact } from '../core/response';

/** An MCP content block, loosely: servers send kinds this SDK version may not know. */
export type McpContent = { type: string; [key: string]: unknown };

/** What `tools/call` answers (the fields used here). */
export interface McpCallResult {
  content?: McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Pre-2024-11-05 servers answer `{ toolResult }` instead of content. */
  toolResult?: unknown;
}

/** How to convert one result. */
export interface ConversionOptions {
  /** Configured server name (artifact ids). */
  server: string;
  /** Tool name (artifact ids and titles). */
  tool: string;
  /** Cap on the result's text, in UTF-8 bytes. */
  maxBytes: number;
  /** Cap on image and blob data (base64 characters) kept per result. @default 786432 */
  maxBinaryBytes?: number;
  /** Applied to every text before capping (the server's secrets). */
  redact?: (text: string) => string;
}

/** Image types Claude accepts in an image block; others are kept only as artifacts. */
const CLAUDE_IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
type ClaudeImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

const DEFAULT_MAX_BINARY_BYTES = 768 * 1024;

/** Bytes of decoded base64 (without decoding it). */
function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

/** Converts one `tools/call` result. `attempt` is left for the activity to set. */
export function convertToolResult(
  result: McpCallResult,
  opts: ConversionOptions,
): Omit<CallToolOutput, 'attempt'> {
  const redact = opts.redact ?? ((t: string) => t);
  const maxBinary = opts.maxBinaryBytes ?? DEFAULT_MAX_BINARY_BYTES;
  const content: ToolResultContent[] = [];
  const artifacts: Artifact[] = [];
  const counters = new Map<string, number>();
  const nextId = (kind: string): string => {
    const n = (counters.get(kind) ?? 0) + 1;
    counters.set(kind, n);
    return `${opts.server}-${opts.tool}-${kind}-${n}`.replace(/[^A-Za-z0-9_-]/g, '-');
  };
  let binaryBytes = 0;
  let droppedBytes = 0;
  /** Whether binary data still fits this result's budget (it is kept whole or not at all). */
  const fits = (data: string): boolean => {
    if (binaryBytes + data.length > maxBinary) {
      droppedBytes += data.length;
      return false;
    }
    binaryBytes += data.length;
    return true;
  };
  const text = (t: string): void => {
    content.push({ type: 'text', text: redact(t) });
  };

  for (const c of result.content ?? []) {
    switch (c.type) {
      case 'text':
        text(str(c.text));
        break;
      case 'image': {
        const mimeType = str(c.mimeType, 'application/octet-stream');
        const data = str(c.data);
        const id = nextId('image');
        if (!fits(data)) {
          text(
            `[image omitted: ${mimeType}, ${base64Bytes(data)} bytes; over the ${maxBinary} bytes of binary data kept per result]`,
          );
          break;
        }
        if (CLAUDE_IMAGE_TYPES.has(mimeType)) {
          content.push({
            type: 'image',
            source: { type: 'base64', media_type: mimeType as ClaudeImageType, data },
          });
        } else {
          text(`[image: ${mimeType}, ${base64Bytes(data)} bytes, not viewable here; kept as artifact ${id}]`);
        }
        artifacts.push({
          id,
          type: mimeType,
          title: `${opts.tool} image ${counters.get('image')}`,
          content: data,
          position: 0,
        });
        break;
      }
      case 'audio':
        text(`[audio: ${str(c.mimeType, 'audio')}, ${base64Bytes(str(c.data))} bytes]`);
        break;
      case 'resource': {
        const r = (c.resource ?? {}) as { uri?: unknown; text?: unknown; blob?: unknown; mimeType?: unknown };
        const uri = str(r.uri);
        if (typeof r.text === 'string') {
          text(`[resource ${uri}]\n${r.text}`);
          break;
        }
        const blob = str(r.blob);
        const mimeType = str(r.mimeType, 'application/octet-stream');
        const id = nextId('resource');
        if (!fits(blob)) {
          text(
            `[binary resource omitted: ${uri}, ${mimeType}, ${base64Bytes(blob)} bytes; over the ${maxBinary} bytes of binary data kept per result]`,
          );
          break;
        }
        artifacts.push({
          id,
          type: mimeType,
          title: redact(uri || `${opts.tool} resource`),
          content: blob,
          position: 0,
        });
        text(`[binary resource ${uri}: ${mimeType}, ${base64Bytes(blob)} bytes, kept as artifact ${id}]`);
        break;
      }
      case 'resource_link': {
        const name = str(c.name);
        const description = str(c.description);
        text(
          `[resource link: ${str(c.uri)}${name ? ` (${name})` : ''}${description ? `: ${description}` : ''}]`,
        );
        break;
      }
      default:
        text(`[unsupported content: ${c.type}]`);
    }
  }
  const hasText = content.some((c) => c.type === 'text');
  if (!hasText && result.structuredContent !== undefined) {
    content.unshift({ type: 'text', text: redact(JSON.stringify(result.structuredContent)) });
  } else if (!content.length && result.toolResult !== undefined) {
    text(typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult));
  }
  if (!content.length)
    text(result.isError ? '(the tool failed without saying why)' : '(the tool returned no content)');
  const capped = capText(content, opts.maxBytes);
  return {
    content: capped.content,
    isError: result.isError === true,
    artifacts,
    truncatedBytes: capped.truncatedBytes + droppedBytes,
  };
}

const marker = (bytes: number): string => `\n[… ${bytes} bytes truncated …]\n`;

/** Cuts one text to `budget` bytes (marker included): head and tail kept, UTF-8 characters whole. */
function cutText(text: string, budget: number): { text: string; cut: number } {
  const buf = Buffer.from(text, 'utf8');
  const bytes = buf.length;
  if (bytes <= budget) return { text, cut: 0 };
  // The marker's length depends on the number in it; the largest it can be is bytes.
  const keep = Math.max(0, budget - Buffer.byteLength(marker(bytes)));
  let headEnd = Math.ceil(keep / 2);
  let tailStart = bytes - (keep - headEnd);
  while (headEnd > 0 && ((buf[headEnd] ?? 0) & 0xc0) === 0x80) headEnd--; // not inside a character
  while (tailStart < bytes && ((buf[tailStart] ?? 0) & 0xc0) === 0x80) tailStart++;
  const cut = tailStart - headEnd;
  return {
    text: buf.subarray(0, headEnd).toString('utf8') + marker(cut) + buf.subarray(tailStart).toString('utf8'),
    cut,
  };
}

/**
 * Caps the text of a result at `maxBytes` (UTF-8, markers included). Short texts are kept whole and
 * the budget left is shared by the long ones, each keeping its head and tail around a
 * `[… N bytes truncated …]` marker. Images are never cut.
 */
export function capText(
  content: ToolResultContent[],
  maxBytes: number,
): { content: ToolResultContent[]; truncatedBytes: number } {
  const sizes = content.map((c) => (c.type === 'text' ? Buffer.byteLength(c.text) : 0));
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= maxBytes) return { content, truncatedBytes: 0 };
  const textIndexes = content
    .flatMap((c, i) => (c.type === 'text' ? [i] : []))
    .sort((a, b) => sizes[a]! - sizes[b]!);
  const budgets = new Map<number, number>();
  let remaining = maxBytes;
  textIndexes.forEach((i, n) => {
    const share = Math.floor(remaining / (textIndexes.length - n));
    const budget = Math.min(sizes[i]!, share);
    budgets.set(i, budget);
    remaining -= budget;
  });
  let truncatedBytes = 0;
  const out = content.map((c, i): ToolResultContent => {
    if (c.type !== 'text') return c;
    const { text, cut } = cutText(c.text, budgets.get(i)!);
    truncatedBytes += cut;
    return cut ? { ...c, text } : c;
  });
  return { content: out, truncatedBytes };
}
