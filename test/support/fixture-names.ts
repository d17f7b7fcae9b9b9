/**
 * The names a test's fixtures take: a scope, an operation, a path or a function that does not
 * exist. They live in a namespace no real one may take (test/unit/test-vocabulary.test.ts checks
 * both sides), so that a plausible future name, a real addition's, never doubles as "unknown".
 */

/** What every fixture name starts with. */
export const FIXTURE_PREFIX = 'fixture';

/** A scope no key can be granted: `fixture:<verb>`. */
export const fixtureScope = (verb: string): string => `${FIXTURE_PREFIX}:${verb}`;

/** An operation id (or function name) no route has: `fixture<Name>`. */
export const fixtureOperationId = (name: string): string => `${FIXTURE_PREFIX}${name.charAt(0).toUpperCase()}${name.slice(1)}`;

/** A path below the base path no route has: `/fixture-<name>`, with any further segments. */
export const fixturePath = (name: string, ...segments: string[]): string => [`/${FIXTURE_PREFIX}-${name}`, ...segments].join('/');

/** Whether a name is in the fixtures' namespace. */
export const isFixtureName = (name: string): boolean => name.replace(/^\//, '').toLowerCase().startsWith(FIXTURE_PREFIX);
