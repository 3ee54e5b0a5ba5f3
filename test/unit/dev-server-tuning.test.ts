import { DEV_SERVER_DYNAMIC_CONFIG, devServerDynamicConfigArgs, devServerEnv } from '../../src/temporal/dev-server-tuning';

describe('dev server dynamic config', () => {
  it('passes every key as a --dynamic-config-value pair with a JSON value', () => {
    const args = devServerDynamicConfigArgs();
    expect(args.length).toBe(2 * Object.keys(DEV_SERVER_DYNAMIC_CONFIG).length);
    expect(args).toEqual(
      expect.arrayContaining([
        '--dynamic-config-value',
        'history.transferProcessorMaxPollRPS=1000',
        'system.enableActivityEagerExecution=true',
        'history.visibilityProcessorUpdateAckInterval="1s"',
      ]),
    );
    for (let i = 0; i < args.length; i += 2) {
      expect(args[i]).toBe('--dynamic-config-value');
      expect(args[i + 1]).toMatch(/^[a-zA-Z.]+=(\d+|true|false|"\d+m?s")$/);
    }
  });
});

describe('dev server environment', () => {
  it('trades memory for CPU with GOGC=400 unless GOGC is set, and keeps the rest of the environment', () => {
    expect(devServerEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', GOGC: '400' });
    expect(devServerEnv({ GOGC: 'off' }).GOGC).toBe('off');
  });
});
