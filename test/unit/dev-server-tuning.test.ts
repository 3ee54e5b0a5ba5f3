import { DEV_SERVER_DYNAMIC_CONFIG, devServerDynamicConfigArgs } from '../../src/temporal/dev-server-tuning';

describe('dev server dynamic config', () => {
  it('passes every key as a --dynamic-config-value pair with a JSON value', () => {
    const args = devServerDynamicConfigArgs();
    expect(args.length).toBe(2 * Object.keys(DEV_SERVER_DYNAMIC_CONFIG).length);
    expect(args).toEqual(
      expect.arrayContaining([
        '--dynamic-config-value',
        'history.transferProcessorMaxPollRPS=1000',
        'system.enableActivityEagerExecution=true',
      ]),
    );
    for (let i = 0; i < args.length; i += 2) {
      expect(args[i]).toBe('--dynamic-config-value');
      expect(args[i + 1]).toMatch(/^[a-zA-Z.]+=(\d+|true|false)$/);
    }
  });
});
