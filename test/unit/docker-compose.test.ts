/**
 * There is no Docker engine on the build machines, so the compose file is checked structurally:
 * the services, images, ports and start order we intend, and that workers can scale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES } from '../../src/core/search-attributes';

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

  it('registers exactly the search attributes the code defines', () => {
    const command = (services['temporal-setup']!.command as string[]).join(' ');
    const names = [...command.matchAll(/--name (\w+) --type (\w+)/g)].map((m) => m[1]);
    expect(names.sort()).toEqual(SEARCH_ATTRIBUTES.map((k) => k.name).sort());
  });
});
