/**
 * `mcp-turns codec-server`: Temporal's codec server protocol (src/codec-server/) for the Web UI, with
 * this process's keyring and payload storage (MCP_TURNS_KEYRING, MCP_TURNS_STORAGE, as every worker).
 * Point the UI at it: `mcp-turns server --codec-endpoint http://127.0.0.1:8888`.
 */
import { Command } from 'commander';
import { buildCodecServerApp } from '../../codec-server/codec-server-app';
import { isLoopbackHost } from '../../config/serve-settings';
import { dataConverterOf, encryptsPayloads } from '../../data-converter/data-converter';
import { CliError, parsePort } from '../cli-error';
import { EXIT } from '../exit-codes';
import { cliSettings } from '../cli-settings';

export const DEFAULT_CODEC_SERVER_PORT = 8888;
const DEFAULT_UI_ORIGINS = ['http://127.0.0.1:8233', 'http://localhost:8233'];

export function codecServerCommand(): Command {
  return new Command('codec-server')
    .description("decrypt payloads for the Temporal Web UI (Temporal's codec server protocol), stored payloads included")
    .option('--port <port>', 'port to listen on', String(DEFAULT_CODEC_SERVER_PORT))
    .option('--host <host>', 'address to bind (anything but loopback needs MCP_TURNS_CODEC_TOKENS)', '127.0.0.1')
    .option('--ui-origin <url...>', `the Web UI's origin(s) allowed to call (default ${DEFAULT_UI_ORIGINS.join(' ')})`)
    .option('--allowed-host <host...>', 'more host names (with port) requests may name, e.g. codec.example.com')
    .action(async (opts: { port: string; host: string; uiOrigin?: string[]; allowedHost?: string[] }, command: Command) => {
      const settings = cliSettings(command);
      const dataConverter = dataConverterOf(settings);
      if (!encryptsPayloads(dataConverter)) {
        throw new CliError('encryption is off: set MCP_TURNS_KEYRING (or encryption.keyring in the config) to the keyring the workers use', EXIT.badInput);
      }
      const tokens = settings.codecTokens.get();
      if (!isLoopbackHost(opts.host) && tokens.length === 0) {
        throw new CliError(`--host ${opts.host} is not loopback: set MCP_TURNS_CODEC_TOKENS=name:token,… so only those callers decode`, EXIT.badInput);
      }
      for (const origin of opts.uiOrigin ?? []) {
        if (!/^https?:\/\/[^/]+$/.test(origin)) throw new CliError(`--ui-origin must be an origin such as http://127.0.0.1:8233, got "${origin}"`, EXIT.badInput);
      }
      const server = {
        host: opts.host,
        port: parsePort(opts.port, '--port'),
        uiOrigins: opts.uiOrigin ?? DEFAULT_UI_ORIGINS,
        tokens,
        allowedHosts: opts.allowedHost ?? [],
      };
      const app = await buildCodecServerApp({
        settings: server,
        codecs: dataConverter.payloadCodecs ?? [],
        ...(dataConverter.externalStorage ? { externalStorage: dataConverter.externalStorage } : {}),
        log: (line) => console.error(`codec-server: ${line}`),
      });
      const address = await app.listen({ host: server.host, port: server.port });
      console.log(`mcp-turns codec server on ${address} for ${server.uiOrigins.join(', ')}${tokens.length ? `; tokens: ${tokens.map((t) => t.name).join(', ')}` : ''}`);
      const stop = (): void => void app.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
