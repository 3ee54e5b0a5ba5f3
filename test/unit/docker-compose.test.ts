/**
 * There is no Docker engine on the build machines, so the compose file is checked structurally:
 * the services, images, ports and start order we intend, and that workers can scale. The search
 * attribute job's script runs against a real dev server in
 * test/integration/compose-setup-job.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES, searchAttributeCliArgs } from '../../src/core/search-attributes';

const root = path.resolve(__dirname, '..', '..');
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Record<string, unknown>>;
};
const services = compose.services;

describe('docker-compose.yml', () => {
  it('has PostgreSQL, Temporal, its setup, the UI and the worker', () => {
    expect(Object.keys(services).sort()).toEqual(['postgresql', 'temporal', 'temporal-setup', 'temporal-ui', 'worker']);
  });

  it('uses official images, pinned through variables with defaults', () => {
    expect(services.postgresql!.image).toMatch(/^postgres:\$\{POSTGRES_VERSION:-\d+\}$/);
    expect(services.temporal!.image).toMatch(/^temporalio\/auto-setup:\$\{TEMPORAL_VERSION:-[\d.]+\}$/);
    expect(services['temporal-ui']!.image).toMatch(/^temporalio\/ui:/);
    expect(services['temporal-setup']!.image).toMatch(/^temporalio\/admin-tools:/);
    expect(services.worker!.build).toBe('.');
    expect(fs.existsSync(path.join(root, 'Dockerfile'))).toBe(true);
  });

  it('runs Temporal on PostgreSQL and starts things in order', () => {
    const temporal = services.temporal!;
    expect((temporal.environment as Record<string, unknown>).DB).toBe('postgres12');
    expect((temporal.environment as Record<string, unknown>).POSTGRES_SEEDS).toBe('postgresql');
    expect(temporal.depends_on).toEqual({ postgresql: { condition: 'service_healthy' } });
    expect(services['temporal-setup']!.depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
    expect(services.worker!.depends_on).toEqual({ 'temporal-setup': { condition: 'service_completed_successfully' } });
  });

  it('publishes gRPC 7233 and the UI, configurable', () => {
    expect(services.temporal!.ports).toEqual(['${TEMPORAL_PORT:-7233}:7233']);
    expect(services['temporal-ui']!.ports).toEqual(['${TEMPORAL_UI_PORT:-8233}:8080']);
  });

  it('lets workers scale: no container_name, no host ports, settings from the environment', () => {
    const worker = services.worker!;
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    const env = worker.environment as Record<string, string>;
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(env.ANTHROPIC_API_KEY).toBe('${ANTHROPIC_API_KEY:-}');
  });

  it('registers exactly the search attributes the code defines, with their types', () => {
    const env = services['temporal-setup']!.environment as Record<string, string>;
    const listed = env.MCP_TURNS_SEARCH_ATTRIBUTES!.split(/\s+/).sort();
    const code = searchAttributeCliArgs().filter((arg) => arg !== '--search-attribute').sort();
    expect(listed).toEqual(code);
    expect(listed).toHaveLength(SEARCH_ATTRIBUTES.length);
  });

  it('runs the attribute job as one shell script that fails loudly, with a bounded wait', () => {
    const setup = services['temporal-setup']!;
    expect(setup.entrypoint).toEqual(['/bin/sh', '-c']);
    const command = setup.command as string[];
    expect(command).toHaveLength(1);
    const script = command[0]!;
    expect(script).not.toMatch(/\|\|\s*true/);
    expect(script).toContain('exit 1');
    expect((setup.environment as Record<string, string>).MCP_TURNS_SETUP_WAIT_SECONDS).toBe('${MCP_TURNS_SETUP_WAIT_SECONDS:-120}');
    expect(setup.restart).toBe('no');
  });

  it("escapes every $ in the job's script for compose, so the shell reads its own environment", () => {
    const script = (services['temporal-setup']!.command as string[])[0]!;
    expect(script.match(/\$+/g)!.every((run) => run.length % 2 === 0)).toBe(true);
  });
});
