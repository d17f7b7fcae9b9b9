/**
 * API key scopes: what a key may do. Each route names the one scope it needs (shared/routes.ts);
 * a key's record in the keys table carries its scopes as a String Set, readable and narrowable in
 * the DynamoDB console.
 */

export const SCOPES = ['pets:read', 'pets:write', 'orders:read'] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/**
 * The scopes a stored `scopes` attribute grants, in the order of SCOPES. It fails closed: an
 * absent attribute (every key is created with one, so it was deleted by hand) grants nothing, and
 * so do strings that are no scope (a typo in the console) and a value of another type than a set
 * or list of strings.
 */
export const grantedScopes = (stored: unknown): Scope[] => {
  const values = stored instanceof Set || Array.isArray(stored) ? [...(stored as Iterable<unknown>)] : [];
  return SCOPES.filter((scope) => values.includes(scope));
};
