/**
 * MCP tool results → Claude tool_result content: text stays text; images become image blocks and
 * artifacts; audio a placeholder; embedded resources text or, when binary, an artifact; resource
 * links their URI; structuredContent JSON when there is no text. One size cap per result keeps the
 * head and the tail with an explicit marker, and never cuts an image.
 */
import type { CallToolOutput, ToolResultContent } from '../core/contracts';
import type { Artifact } from '../core/response';

type McpContent = { type: string; [k: string]: unknown };

export interface McpCallResult {
  content?: McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
}

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export function convertToolResult(
  result: McpCallResult,
  ctx: { server: string; tool: string; maxBytes: number },
): Omit<CallToolOutput, 'attempt'> {
  const content: ToolResultContent[] = [];
  const artifacts: Artifact[] = [];
  let images = 0;
  const artifactId = (kind: string): string => `${ctx.server}-${ctx.tool}-${kind}-${++images}`.replace(/[^A-Za-z0-9_-]/g, '-');

  for (const c of result.content ?? []) {
    switch (c.type) {
      case 'text':
        content.push({ type: 'text', text: String(c.text ?? '') });
        break;
      case 'image': {
        const mimeType = String(c.mimeType ?? 'image/png');
        const data = String(c.data ?? '');
        if (IMAGE_TYPES.has(mimeType)) {
          content.push({ type: 'image', source: { type: 'base64', media_type: mimeType as 'image/png', data } });
        } else {
          content.push({ type: 'text', text: `[image: ${mimeType}, ${Buffer.from(data, 'base64').length} bytes, kept as an artifact]` });
        }
        artifacts.push({ id: artifactId('image'), type: mimeType, title: `${ctx.tool} image`, content: data, position: 0 });
        break;
      }
      case 'audio':
        content.push({ type: 'text', text: `[audio: ${String(c.mimeType ?? 'audio')}, ${Buffer.from(String(c.data ?? ''), 'base64').length} bytes]` });
        break;
      case 'resource': {
        const r = (c.resource ?? {}) as { uri?: string; text?: string; blob?: string; mimeType?: string };
        if (typeof r.text === 'string') content.push({ type: 'text', text: `[resource ${r.uri ?? ''}]\n${r.text}` });
        else {
          const bytes = Buffer.from(r.blob ?? '', 'base64').length;
          const a: Artifact = { id: artifactId('resource'), type: r.mimeType ?? 'application/octet-stream', title: r.uri ?? `${ctx.tool} resource`, content: r.blob ?? '', position: 0 };
          artifacts.push(a);
          content.push({ type: 'text', text: `[binary resource ${r.uri ?? ''}: ${a.type}, ${bytes} bytes, kept as artifact ${a.id}]` });
        }
        break;
      }
      case 'resource_link':
        content.push({
          type: 'text',
          text: `[resource link: ${String(c.uri ?? '')}${c.name ? ` (${String(c.name)})` : ''}${c.description ? ` — ${String(c.description)}` : ''}]`,
        });
        break;
      default:
        content.push({ type: 'text', text: `[unsupported content: ${c.type}]` });
    }
  }
  if (result.structuredContent !== undefined && !content.some((c) => c.type === 'text')) {
    content.unshift({ type: 'text', text: JSON.stringify(result.structuredContent) });
  }
  if (!content.length) content.push({ type: 'text', text: '(the tool returned no content)' });
  const { content: capped, truncatedBytes } = capSize(content, ctx.maxBytes);
  return { content: capped, isError: result.isError === true, artifacts, truncatedBytes };
}

/** Caps the text of a result at maxBytes, keeping head and tail of each text; images are never cut. */
export function capSize(content: ToolResultContent[], maxBytes: number): { content: ToolResultContent[]; truncatedBytes: number } {
  const texts = content.filter((c): c is Extract<ToolResultContent, { type: 'text' }> => c.type === 'text');
  const total = texts.reduce((n, t) => n + Buffer.byteLength(t.text), 0);
  if (total <= maxBytes) return { content, truncatedBytes: 0 };
  let truncatedBytes = 0;
  const out = content.map((c) => {
    if (c.type !== 'text') return c;
    const bytes = Buffer.byteLength(c.text);
    const budget = Math.floor((bytes / total) * maxBytes);
    if (bytes <= budget) return c;
    const buf = Buffer.from(c.text);
    const half = Math.floor(budget / 2);
    const cut = bytes - 2 * half;
    truncatedBytes += cut;
    const head = buf.subarray(0, half).toString('utf8').replace(/\uFFFD$/, '');
    const tail = buf.subarray(bytes - half).toString('utf8').replace(/^\uFFFD/, '');
    return { type: 'text' as const, text: `${head}\n[… ${cut} bytes truncated …]\n${tail}` };
  });
  return { content: out, truncatedBytes };
}
