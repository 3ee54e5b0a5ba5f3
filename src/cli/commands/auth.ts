import { spawn } from 'node:child_process';
import { Command } from 'commander';
import { authorizeServer } from '../../mcp/oauth-authorization';
import { CliError, parsePositiveInt } from '../cli-error';
import { cliSettings } from '../cli-settings';

/** Opens `url` in the desktop's browser, if there is one; the URL is printed either way. */
function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin'
      ? ['open', url]
      : process.platform === 'win32'
        ? ['cmd', '/c', 'start', '', url]
        : ['xdg-open', url];
  try {
    const child = spawn(command[0]!, command.slice(1), { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser here (a server, a container): the printed URL is the way.
  }
}

export function authCommand(): Command {
  return new Command('auth')
    .description(
      'authorize an OAuth MCP server once (authorization code with PKCE); workers then refresh the tokens themselves',
    )
    .argument('<server>', 'the server name in the config file')
    .option('--config <file>', 'config file (JSON or YAML; default MCP_TURNS_CONFIG)')
    .option('--no-browser', 'only print the authorization URL')
    .option('--timeout <seconds>', 'how long to wait for the browser redirect', '300')
    .action(async (name: string, opts: { config?: string; browser: boolean; timeout: string }, command: Command) => {
      const settings = cliSettings(command);
      const config = settings.worker.get();
      const server = config.servers.find((s) => s.name === name);
      if (!server) {
        const names = config.servers.map((s) => s.name).join(', ') || 'none';
        throw new CliError(`no server "${name}" in ${config.source} (servers: ${names})`, 2);
      }
      if (!server.oauth) throw new CliError(`server ${name} has no oauth settings in ${config.source}`, 2);
      const timeoutMs = parsePositiveInt(opts.timeout, '--timeout') * 1000;
      try {
        const result = await authorizeServer(server, {
          timeoutMs,
          openUrl: (url) => {
            console.log(`Open this URL to authorize ${name}:\n\n  ${url.href}\n`);
            if (opts.browser) openBrowser(url.href);
            console.log(`Waiting for the redirect (up to ${timeoutMs / 1000} s)…`);
          },
        });
        const facts = [
          result.scope ? `scope "${result.scope}"` : undefined,
          result.expiresInS !== undefined ? `access token valid ${result.expiresInS} s` : undefined,
          result.grant === 'authorization_code'
            ? result.refreshable
              ? 'workers refresh it themselves'
              : 'no refresh token: authorize again when it expires'
            : 'workers fetch their own tokens; nothing stored',
        ].filter(Boolean);
        console.log(`${name} authorized (${facts.join('; ')}); ${result.tools} tools listed.`);
        if (result.tokenFile) console.log(`Tokens stored in ${result.tokenFile} (mode 0600).`);
      } catch (err) {
        throw new CliError(`authorizing ${name} failed: ${(err as Error).message}`);
      }
    });
}
