/**
 * What the deployed bundles have in place of `@aws-sdk/middleware-endpoint-discovery`
 * (infra/bundling.ts aliases it here). The DynamoDB client resolves endpoint discovery's settings
 * when it is built, which makes a 1,000-entry LRU cache (with the `mnemonist` and `obliterator`
 * packages, about 9 KB of every bundle); but no DynamoDB command this project sends discovers its
 * endpoint, so the cache is never read. This resolves the settings to "off" and builds nothing.
 */
export const ENDPOINT_DISCOVERY_MISSING_MESSAGE =
  'Endpoint discovery is not in this bundle: no DynamoDB command of this project uses it (shared/lambda-aliases/endpoint-discovery.ts).';

/** The setting's loader as the SDK's runtime config reads it: nothing in the environment or a profile turns it on here. */
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (): undefined => undefined,
  configFileSelector: (): undefined => undefined,
  default: false,
};

/** The client's settings, with discovery off; a client built asking for it fails at once, with the reason. */
export const resolveEndpointDiscoveryConfig = <T extends { readonly endpointDiscoveryEnabled?: boolean }>(input: T): T => {
  if (input.endpointDiscoveryEnabled === true) throw new Error(ENDPOINT_DISCOVERY_MISSING_MESSAGE);
  return Object.assign(input, { endpointDiscoveryEnabled: () => Promise.resolve(false), isClientEndpointDiscoveryEnabled: false });
};
