/**
 * The scopes and plans as tests name them, derived from shared/: a scope or plan added there is
 * expected here at once (test/unit/test-vocabulary.test.ts refuses them written out by hand).
 */
import { DEFAULT_PLAN, plans } from '../../shared/plans';
import { routeOf, routes, type Route } from '../../shared/routes';
import { SCOPES, type Scope } from '../../shared/scopes';

/** Every scope, as the key tool writes a key's: comma-separated, no spaces. */
export const ALL_SCOPES_FIELD = SCOPES.join(',');
/** Every scope, as the key tool's messages list them. */
export const ALL_SCOPES_SAID = SCOPES.join(', ');

/** The scopes whose every operation only reads (GET): a read-only key's. */
export const READ_ONLY_SCOPES: readonly Scope[] = SCOPES.filter((scope) =>
  routes.every((route: Route) => route.scope !== scope || route.method === 'GET'),
);

/** A plan that is not the default, for a key moved off it. */
export const OTHER_PLAN: string = (() => {
  const other = Object.keys(plans).find((name) => name !== DEFAULT_PLAN);
  if (other === undefined) throw new Error('The tests need a plan besides the default one.');
  return other;
})();

/** A text as a regular expression that matches it literally. */
export const literally = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The scope each kind of request needs, by an operation that needs it. */
export const READ_PETS = routeOf('listPets').scope;
export const WRITE_PETS = routeOf('createPet').scope;
export const READ_ORDERS = routeOf('listStoreOrders').scope;
