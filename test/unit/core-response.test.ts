import { buildResponse, textOutput } from '../../src/core/response';
import { lastAssistantText, toolResultsMessage } from '../../src/core/transcript';
import type { MessageParam } from '../../src/core/contracts';

describe('buildResponse', () => {
  it('renders text parts as markdown with artifacts referenced where they stood', () => {
    const response = buildResponse(
      {
        thinking: 'why',
        conversation: [
          { type: 'text', content: 'Here is the code:' },
          { type: 'artifact', artifact: { type: 'application/vnd.ant.code', id: 'code', title: 'Sum', content: 'a+b', language: 'ts' } },
          { type: 'text', content: 'And again:' },
          { type: 'artifact', artifact: { type: 'text/markdown', id: 'code', title: 'Notes', content: '# n' } },
        ],
      },
      [{ id: 'img', type: 'image/png', title: 'Chart', content: 'iVBOR', position: 0 }],
    );
    expect(response.thinking).toBe('why');
    expect(response.conversation).toBe(
      'Here is the code:\n\n[artifact: Sum](#artifact-code)\n\nAnd again:\n\n[artifact: Notes](#artifact-code-2)\n\n[artifact: Chart](#artifact-img)',
    );
    expect(response.artifacts).toEqual([
      { id: 'code', type: 'application/vnd.ant.code', title: 'Sum', content: 'a+b', position: 1, language: 'ts' },
      { id: 'code-2', artifactId: 'code', type: 'text/markdown', title: 'Notes', content: '# n', position: 3 },
      { id: 'img', type: 'image/png', title: 'Chart', content: 'iVBOR', position: 6 },
    ]);
  });

  it('wraps plain text', () => {
    expect(buildResponse(textOutput('just text'))).toEqual({ conversation: 'just text', artifacts: [] });
  });
});

describe('transcript rules', () => {
  it('puts every tool_result in one user message, in order, is_error only on failures', () => {
    expect(
      toolResultsMessage([
        { toolUseId: 'a', content: [{ type: 'text', text: 'ok' }], isError: false },
        { toolUseId: 'b', content: [{ type: 'text', text: 'bad' }], isError: true },
      ]),
    ).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'ok' }] },
        { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'bad' }], is_error: true },
      ],
    });
  });

  it('finds the last assistant text', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] },
    ];
    expect(lastAssistantText(messages)).toBe('first');
  });
});
