/**
 * `mcp-turns keys`: the keyring's two-phase rotation. `keys new` adds a key without making it
 * current; once every process has the ring with it, `keys use ID` makes it the key new payloads are
 * encrypted under (running processes see the file change). `keys list` shows the ids, never a key.
 */
import { Command } from 'commander';
import { addNewKey, KeyringError, loadKeyring, useKey } from '../../encryption/keyring';
import { asBadInput, CliError } from '../cli-error';
import { cliSettings } from '../cli-settings';

/**
 * The keyring file: `--keyring`, else MCP_TURNS_KEYRING, else `encryption.keyring` of the config
 * file (the command's `--config`, else MCP_TURNS_CONFIG: src/cli/cli-settings.ts).
 */
function keyringFile(opts: { keyring?: string }, command: Command): string {
  if (opts.keyring) return opts.keyring;
  const settings = cliSettings(command).encryption.get();
  if (!settings) throw new CliError('name the keyring: --keyring FILE, MCP_TURNS_KEYRING, or encryption.keyring in the config file', 2);
  return settings.keyringFile;
}

const KEYRING_OPTION = ['--keyring <file>', 'the keyring file (default MCP_TURNS_KEYRING, else the config\'s encryption.keyring)'] as const;
const CONFIG_OPTION = ['--config <file>', 'config file whose encryption.keyring names the keyring (default MCP_TURNS_CONFIG)'] as const;

export function keysCommand(): Command {
  const keys = new Command('keys').description('the keyring payloads are encrypted with: add a key, make it current, list the ids');
  keys
    .command('new')
    .description('add a new random key to the keyring (made, mode 0600, when missing); current only in a new keyring')
    .option(...KEYRING_OPTION)
    .option(...CONFIG_OPTION)
    .option('--id <id>', 'the new key\'s id (default k<n>)')
    .action((opts: { keyring?: string; config?: string; id?: string }, command: Command) => {
      const file = keyringFile(opts, command);
      const added = asBadInput(() => addNewKey(file, opts.id), KeyringError);
      if (added.current) {
        console.log(`Made keyring ${file} with key ${added.id}, current: new payloads are encrypted under it.`);
      } else {
        console.log(`Added key ${added.id} to ${file}. It decrypts now; it encrypts once every process has this keyring and you run:`);
        console.log(`  mcp-turns keys use ${added.id} --keyring ${file}`);
      }
    });
  keys
    .command('use')
    .description('make a key of the ring current: new payloads are encrypted under it (every process must have it)')
    .argument('<id>', 'the key id')
    .option(...KEYRING_OPTION)
    .option(...CONFIG_OPTION)
    .action((id: string, opts: { keyring?: string; config?: string }, command: Command) => {
      const file = keyringFile(opts, command);
      const { previous } = asBadInput(() => useKey(file, id), KeyringError);
      console.log(
        previous === id
          ? `Key ${id} was already current in ${file}.`
          : `Key ${id} is current in ${file} (was ${previous}); keep ${previous} in the ring while histories or stored payloads under it are kept.`,
      );
    });
  keys
    .command('list')
    .description('the key ids of the ring and which is current (never the keys)')
    .option(...KEYRING_OPTION)
    .option(...CONFIG_OPTION)
    .action((opts: { keyring?: string; config?: string }, command: Command) => {
      const file = keyringFile(opts, command);
      const ring = asBadInput(() => loadKeyring(file), KeyringError);
      console.log(`Keyring ${ring.file}:`);
      for (const id of ring.keys.keys()) console.log(`  ${id}${id === ring.current ? '  (current)' : ''}`);
    });
  return keys;
}
