export { freePort } from '../../src/temporal/dev-server';
