/**
 * The messages `mcp-turns chat` sent whose outcome it has not printed yet, one small file each in
 * `<state dir>/conversations/<conversation id>/<message id>.json`, written before the message is
 * sent and removed once its outcome is printed. After any crash, `chat --id ID` sends them again
 * with the same message id: the conversation answers a message id once, so a message is never lost
 * and never asked twice.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface PendingMessage {
  conversationId: string;
  messageId: string;
  text: string;
  /** ISO time the message was first sent. */
  sentAt: string;
}

/** A name safe as one path segment (conversation and message ids are chosen by users). */
function segmentName(id: string): string {
  return encodeURIComponent(id).replace(/\./g, '%2E');
}

/** Where the pending messages of conversations are kept: `conversations/` in the state directory. */
export function conversationsDir(dir: string): string {
  return path.join(dir, 'conversations');
}

/** The pending messages of one conversation, on disk. */
export class PendingMessages {
  readonly dir: string;

  constructor(
    readonly conversationId: string,
    /** The directory of all conversations' pending messages ({@link conversationsDir}). */
    root: string,
  ) {
    this.dir = path.join(root, segmentName(conversationId));
  }

  private file(messageId: string): string {
    return path.join(this.dir, `${segmentName(messageId)}.json`);
  }

  /** Records a message about to be sent (written aside and renamed: a crash leaves it whole or absent). */
  add(message: Omit<PendingMessage, 'conversationId' | 'sentAt'>): PendingMessage {
    const pending: PendingMessage = { conversationId: this.conversationId, ...message, sentAt: new Date().toISOString() };
    fs.mkdirSync(this.dir, { recursive: true });
    const file = this.file(message.messageId);
    fs.writeFileSync(`${file}.partial`, JSON.stringify(pending));
    fs.renameSync(`${file}.partial`, file);
    return pending;
  }

  /** The message's outcome was printed: forget it. */
  remove(messageId: string): void {
    fs.rmSync(this.file(messageId), { force: true });
    try {
      fs.rmdirSync(this.dir);
    } catch {
      // not empty, or already gone
    }
  }

  /** The messages still waiting for their outcome, oldest first. */
  list(): PendingMessage[] {
    if (!fs.existsSync(this.dir)) return [];
    const found: PendingMessage[] = [];
    for (const name of fs.readdirSync(this.dir)) {
      if (!name.endsWith('.json')) continue;
      try {
        const m = JSON.parse(fs.readFileSync(path.join(this.dir, name), 'utf8')) as PendingMessage;
        if (m.conversationId === this.conversationId && typeof m.messageId === 'string' && typeof m.text === 'string') found.push(m);
      } catch {
        // unreadable: not one of ours
      }
    }
    return found.sort((a, b) => a.sentAt.localeCompare(b.sentAt));
  }
}
