export { freePort } from '../../src/temporal/dev-server';

/**
 * A port where nothing listens, so every connection to it is refused, for as long as a test needs:
 * below the range ports are handed out from (no process of the test run is given it), needing root
 * to bind, and not on fetch's list of blocked ports (1 is, and fails as "bad port" instead).
 */
export const REFUSING_PORT = 2;
