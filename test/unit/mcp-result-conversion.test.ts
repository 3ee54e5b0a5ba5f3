import { convertToolResult, capSize } from '../../src/mcp';

const ctx = { server: 'srv', tool: 'shot', maxBytes: 100 * 1024 };

it('converts every MCP content kind for Claude', () => {
  const out = convertToolResult(
    {
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inside' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAEC', mimeType: 'application/zip' } },
        { type: 'resource_link', uri: 'file:///c.md', name: 'c.md', description: 'notes' },
      ],
    },
    ctx,
  );
  expect(out.isError).toBe(false);
  expect(out.content).toEqual([
    { type: 'text', text: 'hello' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    { type: 'text', text: '[audio: audio/wav, 3 bytes]' },
    { type: 'text', text: '[resource file:///a.txt]\ninside' },
    { type: 'text', text: '[binary resource file:///b.bin: application/zip, 3 bytes, kept as artifact srv-shot-resource-2]' },
    { type: 'text', text: '[resource link: file:///c.md (c.md) — notes]' },
  ]);
  expect(out.artifacts.map((a) => [a.id, a.type])).toEqual([
    ['srv-shot-image-1', 'image/png'],
    ['srv-shot-resource-2', 'application/zip'],
  ]);
});

it('uses structuredContent as JSON text when there is no text, and keeps isError', () => {
  const out = convertToolResult({ content: [], structuredContent: { sum: 5 }, isError: true }, ctx);
  expect(out).toEqual({ content: [{ type: 'text', text: '{"sum":5}' }], isError: true, artifacts: [], truncatedBytes: 0 });
});

it('caps big results keeping head and tail with a marker, never cutting an image', () => {
  const big = 'H'.repeat(3000) + 'M'.repeat(4000) + 'T'.repeat(3000);
  const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'x'.repeat(50_000) } };
  const { content, truncatedBytes } = capSize([{ type: 'text', text: big }, image], 2000);
  const text = (content[0] as { text: string }).text;
  expect(text.startsWith('H'.repeat(1000))).toBe(true);
  expect(text.endsWith('T'.repeat(1000))).toBe(true);
  expect(text).toContain('[… 8000 bytes truncated …]');
  expect(truncatedBytes).toBe(8000);
  expect(content[1]).toBe(image);
});
