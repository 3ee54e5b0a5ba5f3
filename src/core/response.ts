/**
 * The final answer of a turn (docs/response-format.md): markdown conversation with
 * each artifact referenced where it stood, and the artifacts listed beside it.
 */
import type { FormatterOutput } from '../schemas/response-formatter-tool';

export interface Artifact {
  /** Unique within the answer. */
  id: string;
  /** The id the model gave the artifact, when it differs from `id`. */
  artifactId?: string;
  /** MIME-like type, e.g. `application/vnd.ant.code` or `image/png`. */
  type: string;
  title: string;
  /** Text, or base64 for binary artifacts (images from tools). */
  content: string;
  /** Index of the conversation part it stood at (tool artifacts follow the text). */
  position: number;
  language?: string;
}

export interface TurnResponse {
  thinking?: string;
  /** Markdown; artifacts appear as `[artifact: <title>](#artifact-<id>)` references. */
  conversation: string;
  artifacts: Artifact[];
}

export function artifactReference(a: Pick<Artifact, 'id' | 'title'>): string {
  return `[artifact: ${a.title}](#artifact-${a.id})`;
}

/**
 * Builds the final response from the formatter's output plus artifacts that tools produced (images),
 * keeping artifact ids unique.
 */
export function buildResponse(output: FormatterOutput, toolArtifacts: readonly Artifact[] = []): TurnResponse {
  const parts: string[] = [];
  const artifacts: Artifact[] = [];
  const used = new Set<string>();
  const uniqueId = (wanted: string): string => {
    let id = wanted;
    for (let n = 2; used.has(id); n++) id = `${wanted}-${n}`;
    used.add(id);
    return id;
  };
  output.conversation.forEach((item, position) => {
    if (item.type === 'text') {
      parts.push(item.content);
      return;
    }
    const a = item.artifact;
    const id = uniqueId(a.id);
    const artifact: Artifact = { id, type: a.type, title: a.title, content: a.content, position };
    if (id !== a.id) artifact.artifactId = a.id;
    if (a.language !== undefined) artifact.language = a.language;
    artifacts.push(artifact);
    parts.push(artifactReference(artifact));
  });
  for (const t of toolArtifacts) {
    const id = uniqueId(t.id);
    const artifact: Artifact = { ...t, id, position: output.conversation.length + artifacts.length };
    artifacts.push(artifact);
    parts.push(artifactReference(artifact));
  }
  const response: TurnResponse = { conversation: parts.join('\n\n'), artifacts };
  if (output.thinking !== undefined) response.thinking = output.thinking;
  return response;
}

/** A formatter output holding just one markdown text (format: false, or the last-resort fallback). */
export function textOutput(text: string, thinking?: string): FormatterOutput {
  const out: FormatterOutput = { conversation: [{ type: 'text', content: text }] };
  if (thinking !== undefined) out.thinking = thinking;
  return out;
}

/**
 * The answer's text as far as a partial formatter output (its tool input, parsed as it streams)
 * has written it: its text parts, as {@link buildResponse} joins them, up to the first part that is
 * not yet known to be text. It only grows as the input does, and for a whole output it is a prefix
 * of `buildResponse(output).conversation`.
 */
export function partialAnswerText(partial: unknown): string {
  const items = (partial as { conversation?: unknown } | undefined)?.conversation;
  if (!Array.isArray(items)) return '';
  const parts: string[] = [];
  for (const item of items as unknown[]) {
    const { type, content } = (item ?? {}) as { type?: unknown; content?: unknown };
    if (type !== 'text') break;
    parts.push(typeof content === 'string' ? content : '');
  }
  return parts.join('\n\n');
}
