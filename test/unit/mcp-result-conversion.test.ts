/** MCP tool results → Claude tool_result content: every content kind, the size cap, binary budgets. */
import { convertToolResult, capText, ArgumentValidator, Redactor } from '../../src/mcp';

const opts = { server: 'srv', tool: 'shot', maxBytes: 100 * 1024 };
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('content kinds', () => {
  it('converts text, image, audio, embedded resources and resource links', () => {
    const out = convertToolResult(
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'audio', data: 'AAAAAA==', mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inside', mimeType: 'text/plain' } },
          { type: 'resource', resource: { uri: 'file:///b.zip', blob: 'AAEC', mimeType: 'application/zip' } },
          { type: 'resource_link', uri: 'file:///c.md', name: 'c.md', description: 'notes' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
        ],
      },
      opts,
    );
    expect(out.isError).toBe(false);
    expect(out.truncatedBytes).toBe(0);
    expect(out.content).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'text', text: '[audio: audio/wav, 4 bytes]' },
      { type: 'text', text: '[resource file:///a.txt]\ninside' },
      {
        type: 'text',
        text: '[binary resource file:///b.zip: application/zip, 3 bytes, kept as artifact srv-shot-resource-1]',
      },
      { type: 'text', text: '[resource link: file:///c.md (c.md): notes]' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ]);
    expect(out.artifacts).toEqual([
      { id: 'srv-shot-image-1', type: 'image/png', title: 'shot image 1', content: PNG, position: 0 },
      {
        id: 'srv-shot-resource-1',
        type: 'application/zip',
        title: 'file:///b.zip',
        content: 'AAEC',
        position: 0,
      },
      { id: 'srv-shot-image-2', type: 'image/png', title: 'shot image 2', content: PNG, position: 0 },
    ]);
  });

  it('keeps an image type Claude cannot view as an artifact only, and makes ids safe', () => {
    const out = convertToolResult(
      { content: [{ type: 'image', data: 'PHN2Zy8+', mimeType: 'image/svg+xml' }] },
      { ...opts, tool: 'draw.svg' },
    );
    expect(out.content).toEqual([
      {
        type: 'text',
        text: '[image: image/svg+xml, 6 bytes, not viewable here; kept as artifact srv-draw-svg-image-1]',
      },
    ]);
    expect(out.artifacts![0]).toMatchObject({ id: 'srv-draw-svg-image-1', type: 'image/svg+xml' });
  });

  it('uses structuredContent as JSON text only when there is no text, and keeps isError', () => {
    expect(convertToolResult({ content: [], structuredContent: { sum: 5 }, isError: true }, opts)).toEqual({
      content: [{ type: 'text', text: '{"sum":5}' }],
      isError: true,
      artifacts: [],
      truncatedBytes: 0,
    });
    const both = convertToolResult(
      { content: [{ type: 'text', text: 'sum is 5' }], structuredContent: { sum: 5 } },
      opts,
    );
    expect(both.content).toEqual([{ type: 'text', text: 'sum is 5' }]);
  });

  it('says so when there is nothing, and names unknown content kinds', () => {
    expect(convertToolResult({}, opts).content).toEqual([
      { type: 'text', text: '(the tool returned no content)' },
    ]);
    expect(convertToolResult({ isError: true }, opts).content).toEqual([
      { type: 'text', text: '(the tool failed without saying why)' },
    ]);
    expect(convertToolResult({ content: [{ type: 'video' }] }, opts).content).toEqual([
      { type: 'text', text: '[unsupported content: video]' },
    ]);
    expect(convertToolResult({ toolResult: { ok: 1 } }, opts).content).toEqual([
      { type: 'text', text: '{"ok":1}' },
    ]);
  });

  it('redacts secrets from text but never touches image data', () => {
    const r = new Redactor(['sekret-value']);
    const out = convertToolResult(
      {
        content: [
          { type: 'text', text: 'token=sekret-value.' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
        ],
      },
      { ...opts, redact: (t) => r.redact(t) },
    );
    expect(out.content[0]).toEqual({ type: 'text', text: 'token=[redacted].' });
    expect(out.content[1]).toMatchObject({ source: { data: PNG } });
  });
});

describe('size cap', () => {
  const image = {
    type: 'image' as const,
    source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'x'.repeat(50_000) },
  };

  it('keeps head and tail with an explicit marker, within the cap, and never cuts an image', () => {
    const big = 'H'.repeat(3000) + 'M'.repeat(4000) + 'T'.repeat(3000);
    const { content, truncatedBytes } = capText([{ type: 'text', text: big }, image], 2000);
    const text = (content[0] as { text: string }).text;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2000);
    expect(text).toMatch(/^H{980,}\n\[… (\d+) bytes truncated …\]\nT{980,}$/);
    const cut = Number(/\[… (\d+) bytes/.exec(text)![1]);
    expect(cut).toBe(truncatedBytes);
    expect(Buffer.byteLength(text) - Buffer.byteLength(`\n[… ${cut} bytes truncated …]\n`) + cut).toBe(
      10_000,
    );
    expect(content[1]).toBe(image);
  });

  it('leaves results under the cap alone', () => {
    const content = [{ type: 'text' as const, text: 'short' }, image];
    expect(capText(content, 100)).toEqual({ content, truncatedBytes: 0 });
  });

  it('keeps short texts whole and shares the rest among long ones', () => {
    const { content, truncatedBytes } = capText(
      [
        { type: 'text', text: 'a'.repeat(100) },
        { type: 'text', text: 'b'.repeat(5000) },
        { type: 'text', text: 'c'.repeat(9000) },
      ],
      2100,
    );
    const texts = content.map((c) => (c as { text: string }).text);
    expect(texts[0]).toBe('a'.repeat(100));
    expect(Buffer.byteLength(texts[1]!)).toBeLessThanOrEqual(1000);
    expect(Buffer.byteLength(texts[2]!)).toBeLessThanOrEqual(1000);
    expect(texts.reduce((n, t) => n + Buffer.byteLength(t), 0)).toBeLessThanOrEqual(2100);
    expect(truncatedBytes).toBeGreaterThan(12_000);
  });

  it('never splits a UTF-8 character, and counts exactly what it removed', () => {
    const text = 'é'.repeat(3000) + '日本'.repeat(1000); // 2-byte and 3-byte characters
    const { content, truncatedBytes } = capText([{ type: 'text', text }], 1001);
    const out = (content[0] as { text: string }).text;
    expect(out).not.toContain('\uFFFD');
    const [head, tail] = out.split(/\n\[… \d+ bytes truncated …\]\n/);
    expect(Buffer.byteLength(head!) + Buffer.byteLength(tail!) + truncatedBytes).toBe(
      Buffer.byteLength(text),
    );
    expect(head).toMatch(/^é+$/);
    expect(tail).toMatch(/^(日本|本)(日本)*$/);
  });

  it('applies the cap inside convertToolResult and reports truncatedBytes', () => {
    const out = convertToolResult({ content: [{ type: 'text', text: 'x'.repeat(200_000) }] }, opts);
    expect(Buffer.byteLength((out.content[0] as { text: string }).text)).toBeLessThanOrEqual(100 * 1024);
    expect(out.truncatedBytes).toBeGreaterThan(200_000 - 100 * 1024);
  });

  it('drops whole images over the binary budget, saying so, instead of cutting them', () => {
    const data = 'A'.repeat(4000);
    const out = convertToolResult(
      { content: [1, 2, 3].map(() => ({ type: 'image', data, mimeType: 'image/png' })) },
      { ...opts, maxBinaryBytes: 9000 },
    );
    expect(out.content.map((c) => c.type)).toEqual(['image', 'image', 'text']);
    expect((out.content[2] as { text: string }).text).toBe(
      '[image omitted: image/png, 3000 bytes; over the 9000 bytes of binary data kept per result]',
    );
    expect(out.artifacts!.map((a) => a.id)).toEqual(['srv-shot-image-1', 'srv-shot-image-2']);
    expect(out.truncatedBytes).toBe(4000);
  });
});

describe('argument validation', () => {
  const v = new ArgumentValidator();
  const schema = {
    type: 'object' as const,
    properties: { a: { type: 'number' }, b: { type: 'number' }, when: { type: 'string', format: 'date' } },
    required: ['a', 'b'],
    additionalProperties: false,
  };

  it('lists every problem, path first', () => {
    expect(v.check(schema, { a: 'two', when: 'someday', c: 1 })).toEqual({
      ok: false,
      problems: [
        "(arguments) must have required property 'b'",
        '(arguments) must NOT have additional properties (c)',
        '/a must be number',
        '/when must match format "date"',
      ],
    });
    expect(v.check(schema, { a: 1, b: 2 })).toEqual({ ok: true });
  });

  it('reads 2020-12 by default and draft-07 when declared; an unusable schema accepts everything', () => {
    const draft2020 = {
      type: 'object' as const,
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      prefixItems: [],
      properties: { xs: { type: 'array', prefixItems: [{ type: 'number' }] } },
    };
    expect(v.check(draft2020, { xs: ['no'] })).toEqual({ ok: false, problems: ['/xs/0 must be number'] });
    const draft07 = {
      type: 'object' as const,
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'same-id',
      properties: { n: { type: 'integer' } },
    };
    expect(v.check(draft07, { n: 1.5 })).toEqual({ ok: false, problems: ['/n must be integer'] });
    expect(v.check({ ...draft07 }, { n: 2 })).toEqual({ ok: true }); // same $id again compiles
    const errors: string[] = [];
    const lenient = new ArgumentValidator((e) => errors.push(e));
    expect(lenient.check({ type: 'object', properties: { x: { $ref: '#/nowhere' } } }, { x: 1 })).toEqual({
      ok: true,
    });
    expect(errors).toHaveLength(1);
  });
});
