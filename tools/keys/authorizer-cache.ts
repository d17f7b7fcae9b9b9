/**
 * When a change to a key takes effect at the gateway. API Gateway keeps the authorizer's answer
 * per key for the stage's cache TTL; after a change that narrows what a key may do (revoke, a roll
 * that ends the old key now, set-plan), the tool flushes the stage's authorizer cache
 * (FlushStageAuthorizersCache), so that the change holds from the next request. Locally the local
 * server drops the cached answers of a changed key itself, as it reads the keys table's stream.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { flushAuthorizerCache, flushCommandLine, type ApiGatewayCalls } from '../../shared/authorizer-cache';
import { STAGE_NAME } from '../../shared/routes';
import { stackName, stackOutputs } from '../../shared/stack';
import type { KeysTarget } from './target';
import { apiGatewayClientFor } from './api-gateway-client';

export interface AuthorizerCache {
  /**
   * After a change is stored: flushes the authorizer cache where the tool can, and returns the
   * line that says when the change takes effect. Throws one line when the change is stored but the
   * cache could not be flushed (exit status 1): it then takes effect within the TTL.
   */
  afterChange(): Promise<string>;
}

const LOCAL = 'The change takes effect within seconds: the local server drops the cached answers of a key whose item changes.';
const NO_STAGE =
  "The change takes effect within the stage's authorizer cache TTL: --table names no stage whose cache the tool could flush " +
  '(--stage STAGE flushes it).';

/** An API Gateway refusal by its name only: its message may quote an ARN or an account. */
const reasonOf = (error: unknown): string => (error instanceof Error ? error.name : 'no answer');

/** The authorizer cache of `target`'s stage (`apiGateway` built from --region when absent). */
export const authorizerCacheFor = (target: KeysTarget, apiGateway?: ApiGatewayCalls): AuthorizerCache => {
  const { stage, stackOutputs: outputs } = target;
  if (!target.onAws) return { afterChange: async () => LOCAL };
  if (stage === undefined || outputs === undefined) return { afterChange: async () => NO_STAGE };
  return {
    async afterChange() {
      const stored = "The change is stored, but takes effect only within the stage's authorizer cache TTL";
      const restApiId = outputs[stackOutputs.restApiId];
      if (!restApiId) {
        throw new Error(
          `${stored}: stack ${stackName(stage)} has no ${stackOutputs.restApiId} output, so its cache was not flushed. ` +
            `Deploy this version (npx cdk deploy -c stage=${stage}), or flush it now: ` +
            flushCommandLine({ restApiId: '<the API id>', stageName: STAGE_NAME }),
        );
      }
      const apiStage = { restApiId, stageName: STAGE_NAME };
      const client = apiGateway ?? apiGatewayClientFor(target.region);
      try {
        await flushAuthorizerCache(client, apiStage);
      } catch (error) {
        throw new Error(`${stored}: API Gateway refused to flush it (${reasonOf(error)}). Flush it now: ${flushCommandLine(apiStage)}`);
      } finally {
        if (apiGateway === undefined && client instanceof APIGatewayClient) client.destroy();
      }
      return `Flushed the authorizer cache of stage ${stage} (REST API ${restApiId}, stage ${STAGE_NAME}): the change takes effect from the next request.`;
    },
  };
};
