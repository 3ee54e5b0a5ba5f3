/**
 * How long the names a caller chooses may be, where they reach an id, a search attribute, a memo or
 * a header. The schemas (src/schemas/) refuse anything longer, naming the field; sandbox code that
 * sets a search attribute from a caller's value keeps to the same bound (a value past the server's
 * limit fails the workflow task that sets it, and Temporal then ends the workflow).
 */

/** The longest workflow id (a turn's, a conversation's) and message id: every route reads ids this long. */
export const MAX_ID_LENGTH = 200;

/** Room a conversation's id leaves for its turns' suffix (`-turn-<n>`), so they stay within {@link MAX_ID_LENGTH}. */
export const TURN_SUFFIX_ROOM = 16;

/** The longest model id (the `McpTurnsModel` search attribute): far above any real one, far below the server's 2 KB. */
export const MAX_MODEL_LENGTH = 256;

/** The most tools per Claude request a turn (`maxToolsPerRequest`) or a worker (`claude.maxToolsPerRequest`) may ask for. */
export const MAX_TOOLS_PER_REQUEST = 128;

/** The largest turn `context` (its JSON, in UTF-8 bytes): recorded in history with every tool call that uses it. */
export const MAX_CONTEXT_BYTES = 16 * 1024;
