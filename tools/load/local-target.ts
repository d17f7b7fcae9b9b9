/**
 * The API a load run starts for itself: DynamoDB Local in memory (fresh tables every run), the
 * local server metering with the plans given, and the run's keys on one plan, each with a usage
 * key of its own, so that each is metered apart as each deployed client is.
 */
import { generateApiKey } from '../../shared/api-keys';
import type { ApiKeysRepository } from '../../shared/api-keys-repository';
import type { Plans } from '../../shared/plans';
import { localActor } from '../keys/caller';
import { localUsageKey } from '../local-server/usage-plans';
import { startLocalStack } from '../local-server/local-stack';
import { inParallel } from '../requests';

/** The name the run's keys are registered under. */
export const LOAD_KEY_NAME = 'load';

/** Registers `count` new keys on `plan`, each with its own usage key; returns the keys, in order. */
export const registerLoadKeys = async (keys: ApiKeysRepository, count: number, plan: string): Promise<string[]> =>
  inParallel(count, 8, async () => {
    const key = generateApiKey();
    await keys.register(key, LOAD_KEY_NAME, { plan, usage: localUsageKey(), changedBy: localActor() });
    return key;
  });

export interface LoadTargetOptions {
  /** How many keys to register. */
  readonly keys: number;
  readonly plan: string;
  /** The plans the local server meters with. */
  readonly plans: Plans;
}

export const startLoadTarget = async ({ keys, plan, plans }: LoadTargetOptions) => {
  const stack = await startLocalStack({ dynamodbLocal: { port: 0 }, keyName: LOAD_KEY_NAME, server: { port: 0, plans } });
  try {
    // The stack's own key goes on the plan too.
    await stack.keys.setPlan(stack.keyId, plan, { changedBy: localActor() });
    const others = await registerLoadKeys(stack.keys, keys - 1, plan);
    return { url: stack.url, keys: [stack.key, ...others], stop: stack.stop };
  } catch (error) {
    await stack.stop();
    throw error;
  }
};
