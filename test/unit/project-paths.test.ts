import os from 'node:os';
import path from 'node:path';
import { isInstalledPackage, packageRoot, stateDir, userStateDir } from '../../src/temporal/project-paths';

describe('state directory', () => {
  it('MCP_TURNS_HOME wins, resolved to an absolute path', () => {
    expect(stateDir({ MCP_TURNS_HOME: 'rel/state' })).toBe(path.resolve('rel/state'));
  });

  it('a clone keeps state in .mcp-turns/ at its root; an installed copy never inside node_modules', () => {
    expect(isInstalledPackage(packageRoot())).toBe(false);
    expect(stateDir({})).toBe(path.join(packageRoot(), '.mcp-turns'));
    expect(isInstalledPackage(path.join('/srv/app', 'node_modules', 'mcp-turns'))).toBe(true);
    expect(isInstalledPackage('/srv/node_modules_backup/mcp-turns')).toBe(false);
  });

  it('the per-user directory follows each platform', () => {
    expect(userStateDir({ XDG_STATE_HOME: '/x/state' }, 'linux')).toBe('/x/state/mcp-turns');
    expect(userStateDir({}, 'linux')).toBe(path.join(os.homedir(), '.local', 'state', 'mcp-turns'));
    expect(userStateDir({}, 'darwin')).toBe(
      path.join(os.homedir(), 'Library', 'Application Support', 'mcp-turns'),
    );
    expect(userStateDir({ LOCALAPPDATA: 'C:\\Users\\a\\AppData\\Local' }, 'win32')).toBe(
      path.join('C:\\Users\\a\\AppData\\Local', 'mcp-turns'),
    );
  });
});
