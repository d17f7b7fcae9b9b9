/**
 * The expiry sweep, run on a schedule: marks each key whose expiry has passed with `expiredAt`,
 * as `system:key-expiry`. A key stops working at its `expiresAt` without this; the mark is a
 * write to the keys table, and so a stream record and a line of the audit trail ("expired"),
 * within one schedule interval of the expiry. Once it has marked a key, it flushes the stage's
 * authorizer cache, whose answer from before the expiry would let the key in for the rest of the TTL.
 */
import middy from '@middy/core';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { ScheduledEvent } from 'aws-lambda';
import { apiKeysRepository, KeysNotMarked, type ApiKeyRecord, type ApiKeysRepository } from '../shared/api-keys-repository';
import { apiStageOf, flushAuthorizerCache, type ApiGatewayCalls } from '../shared/authorizer-cache';
import { logger, safeErrorFields } from '../shared/logger';

/** Who the audit trail names for an expiry reached. */
export const EXPIRY_SWEEP_ACTOR = 'system:key-expiry';

export interface KeyExpiryDependencies {
  readonly keys?: ApiKeysRepository;
  readonly now?: () => Date;
  /**
   * Flushes the stage's authorizer cache. By default that of the stage the environment names
   * (REST_API_ID, API_STAGE_NAME, set by the stack); none where it names none (locally, where the
   * local gateway drops a changed key's answers as it reads the keys table's stream).
   */
  readonly flushAuthorizerCache?: () => Promise<void>;
}

export interface KeyExpiryResult {
  /** Ids of the keys marked expired by this run. */
  readonly marked: readonly string[];
}

/**
 * What the sweep throws when it fails, in place of the error itself: the Lambda runtime logs a
 * thrown error's message and stack, and an SDK message may quote the table or the role. Thrown
 * still, so the invocation fails and the KeyExpiryErrors alarm fires.
 */
export class ExpirySweepFailed extends Error {
  constructor() {
    super('the expiry sweep failed: the line before says why');
    this.name = 'ExpirySweepFailed';
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** The keys are marked, but API Gateway may still let them in on an answer it cached before their expiry. */
export class AuthorizerCacheNotFlushed extends Error {
  override readonly name = 'AuthorizerCacheNotFlushed';

  constructor(cause: unknown) {
    super(
      `the keys marked expired are refused within the stage's authorizer cache TTL: API Gateway did not flush the cache (${
        cause instanceof Error ? cause.name : typeof cause
      })`,
    );
  }
}

/** One safe line for a failed sweep (safeErrorFields), then a failure that carries nothing else. */
const sweepFailureLog = (): middy.MiddlewareObj<ScheduledEvent | Record<string, never>, KeyExpiryResult> => ({
  onError: async (request) => {
    logger.error('expiry sweep failed', safeErrorFields(request.error));
    request.error = new ExpirySweepFailed();
  },
});

/** The stage's flush, with one API Gateway client per container, made at the first flush. */
const stageFlush = (): (() => Promise<void>) | undefined => {
  const stage = apiStageOf();
  if (stage === undefined) return undefined;
  let apiGateway: ApiGatewayCalls | undefined;
  return () => flushAuthorizerCache((apiGateway ??= new APIGatewayClient({})), stage);
};

export const createHandler = ({
  keys = apiKeysRepository(),
  now = () => new Date(),
  flushAuthorizerCache: flush = stageFlush(),
}: KeyExpiryDependencies = {}) =>
  middy<ScheduledEvent | Record<string, never>, KeyExpiryResult>()
    .use(sweepFailureLog())
    .handler(async () => {
      // Keys it could not mark fail the run, after the cache is flushed for those it did mark.
      const { marked, notMarked } = await keys.markExpired(now(), EXPIRY_SWEEP_ACTOR).then(
        (records): { marked: readonly ApiKeyRecord[]; notMarked?: KeysNotMarked } => ({ marked: records }),
        (error: unknown) => {
          if (error instanceof KeysNotMarked) return { marked: error.marked, notMarked: error };
          throw error;
        },
      );
      const keyIds = marked.map((record) => record.keyId);
      if (keyIds.length > 0) {
        logger.info('keys marked expired', { keyIds });
        await flush?.().catch((error: unknown) => {
          throw new AuthorizerCacheNotFlushed(error);
        });
      }
      if (notMarked !== undefined) throw notMarked;
      return { marked: keyIds };
    });

export const handler = createHandler();
