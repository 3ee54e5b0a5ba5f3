/** What a filesystem payload store holds (`<dir>/<first two hex>/<key>`), for the benches. */
import fs from 'node:fs';
import path from 'node:path';

/** Files and bytes in the store; none when it does not exist yet. */
export function storeSize(dir: string): { objects: number; bytes: number } {
  let objects = 0;
  let bytes = 0;
  if (!fs.existsSync(dir)) return { objects, bytes };
  for (const sub of fs.readdirSync(dir)) {
    for (const f of fs.readdirSync(path.join(dir, sub))) {
      objects++;
      bytes += fs.statSync(path.join(dir, sub, f)).size;
    }
  }
  return { objects, bytes };
}
