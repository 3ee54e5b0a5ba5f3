/** What a namespace that lacks one of mcp-turns' search attributes answers, read from the server's refusal of a start or of a list. */
import { missingSearchAttribute, missingSearchAttributeLine } from '../../src/client/missing-search-attribute';

describe('a missing search attribute', () => {
  it("is read from a start's refusal and from a list's, each through the error's causes", () => {
    const start = new Error('Failed to start Workflow', { cause: new Error('3 INVALID_ARGUMENT: Namespace team has no mapping defined for search attribute McpTurnsOwner') });
    expect(missingSearchAttribute(start)).toEqual({ namespace: 'team', name: 'McpTurnsOwner' });
    const list = new Error('Failed to list workflows', { cause: new Error('3 INVALID_ARGUMENT: invalid query: invalid search attribute: McpTurnsOwner') });
    expect(missingSearchAttribute(list, 'team')).toEqual({ namespace: 'team', name: 'McpTurnsOwner' });
    expect(missingSearchAttribute(new Error('Failed to list workflows', { cause: new Error('invalid query: invalid search attribute: CustomField') }))).toBeUndefined();
    expect(missingSearchAttribute(new Error('something else'))).toBeUndefined();
  });

  it('is told in one line with the command that registers it', () => {
    expect(missingSearchAttributeLine({ namespace: 'team', name: 'McpTurnsOwner' })).toBe(
      'namespace team has no search attribute McpTurnsOwner: register it (temporal operator search-attribute create --namespace team --name McpTurnsOwner --type Keyword; docs/operations.md lists them all)',
    );
  });
});
