/**
 * The API Gateway side of a key: the API key of its own that meters it on its usage plan. Against a
 * deployed stage that is a real API Gateway API key (CreateApiKey, CreateUsagePlanKey,
 * DeleteUsagePlanKey, UpdateApiKey, and DeleteApiKey for one no key record holds); locally it is
 * a random value with a local id, which the local gateway meters on the plan the authorizer names.
 * Which plans exist: locally those in force (PLANS_FILE honoured), on AWS the stack's UsagePlanIds.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import { randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import type { UsageKey } from '../../shared/api-keys-repository';
import { PLAN_NAME_PATTERN, plansInForce } from '../../shared/plans';
import { PROJECT_NAME } from '../../shared/project';
import { stackName, stackOutputs } from '../../shared/stack';
import { UsageError } from '../cli';
import { localUsageKey } from '../local-server/usage-plans';
import { KEYS_HELP, type KeysTarget } from './target';

export type ApiGatewayCalls = Pick<APIGatewayClient, 'send'>;

export interface UsageKeys {
  /** Whether the API keys are API Gateway's (on AWS), rather than the local gateway's values. */
  readonly onApiGateway: boolean;
  /**
   * Throws a UsageError of one line unless `plan` is a plan keys can be put on here: on a keys
   * table named alone (--table) on AWS, whose usage plans the tool cannot know, none is.
   */
  checkPlan(plan: string): void;
  /** A new API key in `plan` for our key `keyId`: a random value, never the bearer key. */
  create(keyId: string, plan: string): Promise<UsageKey>;
  /** Moves an API key from the usage plan of `from` to that of `to`. */
  move(usageKeyId: string, from: string, to: string): Promise<void>;
  /** Disables an API key, so that API Gateway admits no request on it any more (locally there is none to disable). */
  disable(usageKeyId: string): Promise<void>;
  /** Deletes an API key `create` made that no key record holds (a write that failed after it). */
  discard(usageKeyId: string): Promise<void>;
  /** Frees the client, if one was made. */
  close(): void;
}

/** An API key's value: 40 hexadecimal digits (160 random bits), within API Gateway's 20 to 128 characters. */
const newUsageKeyValue = (): string => randomBytes(20).toString('hex');

const unknownPlan = (plan: string, known: readonly string[], where: string): UsageError =>
  new UsageError(
    PLAN_NAME_PATTERN.test(plan)
      ? `unknown plan '${plan}': ${where} are ${known.join(', ')}.`
      : `a plan name is 1-32 lower-case letters, digits or hyphens: ${where} are ${known.join(', ')}.`,
  );

/** Locally: plans in force, and a usage key that is only a value and an id, as the local gateway needs no more. */
const localUsageKeys = (env: Readonly<Record<string, string | undefined>>): UsageKeys => {
  const planNames = (): string[] => {
    try {
      return Object.keys(plansInForce(env));
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  };
  return {
    onApiGateway: false,
    checkPlan(plan) {
      const known = planNames();
      if (!known.includes(plan)) throw unknownPlan(plan, known, 'the plans in force');
    },
    create: async () => localUsageKey(),
    move: async () => undefined,
    disable: async () => undefined,
    discard: async () => undefined,
    close: () => undefined,
  };
};

const UsagePlanIds = z.record(z.string(), z.string().check(z.minLength(1)));

/** The stack's UsagePlanIds output, read: each plan's usage plan id. */
const usagePlanIdsOf = (stage: string, outputs: Readonly<Record<string, string>>): Readonly<Record<string, string>> => {
  const text = outputs[stackOutputs.usagePlanIds];
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const ids = UsagePlanIds.safeParse(parsed);
  if (!ids.success) {
    throw new Error(
      `Stack ${stackName(stage)} has no readable ${stackOutputs.usagePlanIds} output: deploy it with this version (npx cdk deploy -c stage=${stage}).`,
    );
  }
  return ids.data;
};

/** What an API Gateway refusal is called: its name only, as its message may quote ids or values. */
const reasonOf = (error: unknown): string => (error instanceof Error ? error.name : 'no answer');

const awsUsageKeys = (target: KeysTarget, apiGateway: ApiGatewayCalls | undefined): UsageKeys => {
  let client: ApiGatewayCalls | undefined = apiGateway;
  const calls = (): ApiGatewayCalls => (client ??= new APIGatewayClient({ region: target.region }));
  const { stage, stackOutputs: outputs } = target;

  const usagePlanIds = (): Readonly<Record<string, string>> => {
    if (stage === undefined || outputs === undefined) {
      throw new UsageError(`plans on AWS are the stage's usage plans: give --stage STAGE rather than --table (see ${KEYS_HELP}).`);
    }
    return usagePlanIdsOf(stage, outputs);
  };
  const usagePlanId = (plan: string): string => {
    const ids = usagePlanIds();
    // Own properties only: a plan named `constructor` is no plan.
    const id = Object.hasOwn(ids, plan) ? ids[plan] : undefined;
    if (id === undefined) throw unknownPlan(plan, Object.keys(ids), `the plans of stage ${stage}`);
    return id;
  };
  const failed = (what: string, error: unknown): Error => new Error(`API Gateway refused to ${what} (${reasonOf(error)}).`);

  const addToPlan = async (usageKeyId: string, plan: string): Promise<void> => {
    await calls().send(new CreateUsagePlanKeyCommand({ usagePlanId: usagePlanId(plan), keyId: usageKeyId, keyType: 'API_KEY' }));
  };
  const discard = async (usageKeyId: string): Promise<void> => {
    await calls()
      .send(new DeleteApiKeyCommand({ apiKey: usageKeyId }))
      .catch((error: unknown) => {
        throw failed(`delete the API key ${usageKeyId}, which no key uses now: delete it in the console`, error);
      });
  };

  return {
    onApiGateway: true,
    checkPlan(plan) {
      usagePlanId(plan);
    },
    async create(keyId, plan) {
      const value = newUsageKeyValue();
      const created = await calls()
        .send(
          new CreateApiKeyCommand({
            // Named as the stack names the usage plans: pet-store-<stage>-….
            name: `${PROJECT_NAME}-${stage ?? ''}-${keyId}`,
            description: `Meters the pet store key ${keyId} on its plan (npm run keys).`,
            value,
            enabled: true,
          }),
        )
        .catch((error: unknown) => {
          throw failed('create an API key', error);
        });
      if (!created.id) throw new Error('API Gateway created an API key but did not say its id.');
      const usageKeyId = created.id;
      try {
        await addToPlan(usageKeyId, plan);
      } catch (error) {
        await discard(usageKeyId);
        throw failed(`put the new API key in plan ${plan}`, error);
      }
      return { usageKeyId, usageKey: value };
    },
    async move(usageKeyId, from, to) {
      const fromId = usagePlanIds()[from];
      const toId = usagePlanId(to);
      // An API key can be in one usage plan of a stage only: out of the old one first. A plan the
      // stage no longer has holds no key; one moved in the console meanwhile is not in it either.
      if (fromId !== undefined) {
        await calls()
          .send(new DeleteUsagePlanKeyCommand({ usagePlanId: fromId, keyId: usageKeyId }))
          .catch((error: unknown) => {
            if (reasonOf(error) !== 'NotFoundException') throw failed(`take the API key ${usageKeyId} out of plan ${from}`, error);
          });
      }
      try {
        // In it already (moved there in the console): the keys table is then brought in line.
        await addToPlan(usageKeyId, to).catch((error: unknown) => {
          if (reasonOf(error) !== 'ConflictException') throw error;
        });
      } catch (error) {
        // Back into the old plan, so that the key is metered (and admitted) as before.
        const back =
          fromId === undefined
            ? true
            : await addToPlan(usageKeyId, from).then(
                () => true,
                () => false,
              );
        const after = back ? '' : `, nor back in plan ${from}: add it there in the console`;
        throw failed(`put the API key ${usageKeyId} in plan ${to}${after}`, error);
      }
    },
    async disable(usageKeyId) {
      await calls()
        .send(new UpdateApiKeyCommand({ apiKey: usageKeyId, patchOperations: [{ op: 'replace', path: '/enabled', value: 'false' }] }))
        .catch((error: unknown) => {
          throw failed(`disable the API key ${usageKeyId}: run the revoke again`, error);
        });
    },
    discard,
    close() {
      if (apiGateway === undefined && client instanceof APIGatewayClient) client.destroy();
    },
  };
};

/** The usage keys of `target`: API Gateway's on AWS (`apiGateway`, built from --region when absent), local ones otherwise. */
export const usageKeysFor = (
  target: KeysTarget,
  env: Readonly<Record<string, string | undefined>>,
  apiGateway?: ApiGatewayCalls,
): UsageKeys => (target.onAws ? awsUsageKeys(target, apiGateway) : localUsageKeys(env));
