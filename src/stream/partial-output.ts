/**
 * A turn's `output` as its JSON answer is written: the text so far, parsed as partial JSON (an
 * unfinished string, array or object is taken as far as it goes). A delta yields the object only
 * when it differs from the one yielded last, so a subscriber gets one `data-output` per change, not
 * one per delta; text that does not parse (yet) yields nothing. The answer is an object: its text is
 * read from its first `{`, so a fence or a word written before it does not hide it.
 */
import { parse as parsePartialJson, Allow } from 'partial-json';

export class PartialOutput {
  private text = '';
  /** The last object yielded, as JSON. */
  private last: string | undefined;

  /** The answer's text so far is void (a retry discards it): the parse starts again. */
  reset(): void {
    this.text = '';
    this.last = undefined;
  }

  /** Adds `delta` to the text; the object parsed so far when it changed, else undefined. */
  add(delta: string): { value: unknown } | undefined {
    this.text += delta;
    const start = this.text.indexOf('{');
    if (start < 0) return undefined;
    let value: unknown;
    try {
      value = parsePartialJson(this.text.slice(start), Allow.ALL);
    } catch {
      return undefined;
    }
    if (value === undefined) return undefined;
    const json = JSON.stringify(value);
    if (json === this.last) return undefined;
    this.last = json;
    return { value };
  }
}
