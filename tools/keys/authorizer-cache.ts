/**
 * When a change to a key takes effect at the gateway. API Gateway keeps the authorizer's answer
 * per key for the stage's cache TTL; after a change that narrows what a key may do (revoke, a roll
 * that ends the old key now, set-plan), the tool flushes the stage's authorizer cache
 * (FlushStageAuthorizersCache), so that the change holds from the next request. Locally the local
 * server drops the cached answers of a changed key itself, as it reads the keys table's stream.
 * A stage in several regions has an authorizer cache in each (FlushStageAuthorizersCache is
 * regional): the tool flushes every region's, and says which it reached and which not, and why.
 * The change holds from the next request in the home region, where it is written; in another only
 * once it has replicated there, and that region's key-audit function has flushed its cache (the
 * tool's flush may come first, and the authorizer cache the old answer again): at most the stage's
 * authorizer cache TTL.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { flushAuthorizerCache, flushCommandLine, type ApiGatewayCalls } from '../../shared/authorizer-cache';
import { STAGE_NAME } from '../../shared/routes';
import { stackName, stackOutputs } from '../../shared/stack';
import { awsErrorName } from '../stack-outputs';
import type { KeysTarget, StageRegion } from './target';
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

/** Why a region was not reached, in words: API Gateway's refusal by its name, no answer, or its stack's own line. */
const unreachedBecause = (error: unknown): string => {
  const kind = awsErrorName(error);
  // A stack that could not be read says so in its own line, which names its region: the list names it already.
  if (kind === undefined) return error instanceof Error ? error.message.replace(/^In [a-z0-9-]+: /, '').replace(/\.$/, '') : 'no answer';
  return /Timeout|Network|ECONN|EAI_AGAIN|ENOTFOUND/i.test(kind) || (error as { code?: unknown }).code !== undefined
    ? `API Gateway did not answer (${kind})`
    : `API Gateway refused the flush (${kind})`;
};

/**
 * The authorizer caches of a stage in several regions: each region's flushed at once, with that
 * region's REST API (its stack's RestApiId output) and client.
 */
/**
 * When the change takes effect in each of a stage's regions: at once at home, where it is written;
 * elsewhere once it has replicated and that region's audit function has flushed its cache.
 */
export const regionalEffect = (stage: string, regions: readonly string[]): string => {
  const settings = stageSettings(stage);
  const home = homeRegionOf(settings);
  const others = regions.filter((region) => region !== home);
  const atHome = home === undefined ? [] : [`in ${home}, its home region, where it is written, from the next request`];
  const elsewhere =
    others.length === 0
      ? []
      : [
          `in ${others.join(', ')} once it has replicated there (usually within a second) and that region's audit function ` +
            `has flushed its cache: at most the stage's authorizer cache TTL (${settings.authorizerCacheTtlSeconds} s)`,
        ];
  return `The change takes effect ${[...atHome, ...elsewhere].join('; ')}.`;
};

const regionalCaches = (
  stage: string,
  regions: readonly StageRegion[],
  clientIn: (region: string) => { client: ApiGatewayCalls; made: boolean },
): AuthorizerCache => ({
  async afterChange() {
    const flushIn = async ({ region, outputs }: StageRegion): Promise<void> => {
      const restApiId = (await outputs())[stackOutputs.restApiId];
      if (!restApiId) throw new Error(`stack ${stackName(stage)} there has no ${stackOutputs.restApiId} output (deploy this version)`);
      const { client, made } = clientIn(region);
      try {
        await flushAuthorizerCache(client, { restApiId, stageName: STAGE_NAME });
      } finally {
        if (made && client instanceof APIGatewayClient) client.destroy();
      }
    };
    const settled = await Promise.allSettled(regions.map(flushIn));
    const reached = regions.filter((_, index) => settled[index]?.status === 'fulfilled').map(({ region }) => region);
    const missed = regions.flatMap(({ region }, index) => {
      const result = settled[index];
      return result?.status === 'rejected' ? [`${region} (${unreachedBecause(result.reason)})`] : [];
    });
    if (missed.length === 0) {
      return `Flushed the authorizer cache of stage ${stage} in ${reached.join(', ')}. ${regionalEffect(stage, reached)}`;
    }
    throw new Error(
      `The change is stored. Flushed the authorizer cache of stage ${stage} in ${reached.length === 0 ? 'no region' : reached.join(', ')}; ` +
        `not in ${missed.join(', ')}: there it takes effect when that region's audit function flushes its cache as the change ` +
        `reaches its replica, else within the stage's authorizer cache TTL (${stageSettings(stage).authorizerCacheTtlSeconds} s). Flush it there now: ` +
        `${flushCommandLine({ restApiId: `<its ${stackOutputs.restApiId} output>`, stageName: STAGE_NAME })} --region <region>`,
    );
  },
});

/**
 * The authorizer cache of `target`'s stage (`apiGateway` built from --region when absent; in a
 * stage of several regions, `apiGatewayIn` each region's).
 */
export const authorizerCacheFor = (
  target: KeysTarget,
  apiGateway?: ApiGatewayCalls,
  apiGatewayIn?: (region: string) => ApiGatewayCalls,
): AuthorizerCache => {
  const { stage, stackOutputs: outputs, stageRegions } = target;
  if (!target.onAws) return { afterChange: async () => LOCAL };
  if (stage === undefined || outputs === undefined) return { afterChange: async () => NO_STAGE };
  if (stageRegions !== undefined) {
    return regionalCaches(stage, stageRegions, (region) => {
      const given = apiGatewayIn?.(region);
      return given === undefined ? { client: apiGatewayClientFor(region), made: true } : { client: given, made: false };
    });
  }
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
