/**
 * Debian's Chromium for the UI check. Playwright cannot download its own browser on these machines,
 * so the check uses the system one, installing it with apt-get when it is missing (as root).
 */
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function ensureChromium(log: (line: string) => void = console.log): string {
  if (fs.existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (or set CHROMIUM_PATH)`);
  }
  const t0 = Date.now();
  log('installing Debian chromium for the UI check (apt-get)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'ignore', env });
  log(`chromium installed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return CHROMIUM;
}

/** Flags for a closed network: no background connections that would be refused anyway. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
