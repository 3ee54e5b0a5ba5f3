import { ChatTurnInputError, parseChatTurnInput } from '../../src/schemas/turn-input';
import { canonicalJson } from '../../src/core/canonical-json';
import { DEFAULT_MODEL, resolveTurn } from '../../src/core/resolve-turn';

describe('parseChatTurnInput', () => {
  it('checks without applying defaults, trimming the question', () => {
    expect(parseChatTurnInput({ question: '  hi ' })).toEqual({ question: 'hi' });
  });

  it('refuses a history content block that is not an object with a string type', () => {
    expect(() => parseChatTurnInput({ question: 'q', history: [{ role: 'user', content: [{ text: 'no type' }] }] })).toThrow(
      /history\.0\.content/,
    );
  });

  it('names every bad field', () => {
    let error: unknown;
    try {
      parseChatTurnInput({ question: ' ', maxSteps: 0, loopPolicy: 'loop', serverz: ['x'], tools: { allow: 'x' } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ChatTurnInputError);
    const problems = (error as ChatTurnInputError).problems.join('\n');
    expect(problems).toMatch(/^question: question must not be empty/m);
    expect(problems).toMatch(/^maxSteps: /m);
    expect(problems).toMatch(/^loopPolicy: /m);
    expect(problems).toMatch(/^tools\.allow: /m);
    expect(problems).toMatch(/serverz/);
  });

  it('accepts prior history with content blocks passed through', () => {
    const history = [
      { role: 'user' as const, content: 'q1' },
      { role: 'assistant' as const, content: [{ type: 'text', text: 'a1', citations: null }] },
    ];
    expect(parseChatTurnInput({ question: 'q2', history }).history).toEqual(history);
  });
});

describe('resolveTurn', () => {
  it('applies every default, the model from the worker when the input names none', () => {
    expect(resolveTurn({ question: ' hi ' }, { model: 'worker-model' })).toEqual({
      question: 'hi',
      model: 'worker-model',
      maxSteps: 5,
      maxTokensPerCall: 4096,
      format: true,
      loopPolicy: 'native',
      maxToolsPerRequest: 15,
    });
  });

  it("keeps the caller's values; mcp-turns' model when neither names one", () => {
    const input = { question: 'q', model: 'mine', maxSteps: 9, maxTokensPerCall: 100, format: false, loopPolicy: 'gather-then-format' as const, maxToolsPerRequest: 3 };
    expect(resolveTurn(input, { model: 'worker-model' })).toEqual(input);
    expect(resolveTurn({ question: 'q' }, {}).model).toBe(DEFAULT_MODEL);
  });
});

describe('canonicalJson', () => {
  it('gives equal strings for equal values regardless of key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { y: 2, z: 1 }] }, b: 1 }),
    );
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
  });
});
