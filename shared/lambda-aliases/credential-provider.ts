/**
 * The deployed functions' AWS credentials. infra/bundling.ts aliases the SDK's
 * `@aws-sdk/credential-provider-node` (the default chain) to this module in the Lambda bundles only.
 * Lambda always gives a function its role's credentials in AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, the chain's first link, so its other links (SSO,
 * shared ini files, credential_process, web identity, container and instance metadata, with the
 * STS and SSO clients they carry) never run there, yet cost about 130 KB of every bundle and
 * their share of every cold start. The local server and the tests run unbundled, on the SDK's
 * whole chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { defaultProvider as chainDefaultProvider } from '@aws-sdk/credential-provider-node';
import type { AwsCredentialIdentity } from '@smithy/types';

/** What a function without credentials logs: the variables it read, never their values. */
export const MISSING_CREDENTIALS_MESSAGE =
  'No AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set. ' +
  "Lambda sets them, and AWS_SESSION_TOKEN, from the function's role; " +
  'this bundle reads no other source (shared/lambda-aliases/credential-provider.ts).';

/** Same name and signature as the chain it replaces, so the SDK's clients call it unchanged. */
export const defaultProvider: typeof chainDefaultProvider = (init) => {
  const fromVariables = fromEnv(init);
  let cached: AwsCredentialIdentity | undefined;
  return async ({ forceRefresh = false } = {}) => {
    // Like the chain (the SDK does not memoize it): read once, again when asked to or when the
    // credentials say they expire.
    if (cached && !forceRefresh && !cached.expiration) return cached;
    try {
      cached = await fromVariables();
      return cached;
    } catch (cause) {
      throw new Error(MISSING_CREDENTIALS_MESSAGE, { cause });
    }
  };
};
