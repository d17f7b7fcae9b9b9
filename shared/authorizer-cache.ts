/**
 * API Gateway's authorizer cache of a stage: it keeps the authorizer's answer per `Authorization`
 * value for the stage's TTL, so a key changed in the keys table keeps its old answer that long.
 * Whoever narrows a key's access flushes it (FlushStageAuthorizersCache), so that the change holds
 * from the next request: the key tool after its changes, the expiry sweep after it marks a key,
 * and, in each region of a stage in several, the key-audit function once the change reaches the
 * region's replica of the keys table.
 */
import { APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';

/** The variables that name the stage whose cache the expiry sweep flushes (set by the stack). */
export const REST_API_ID_VARIABLE = 'REST_API_ID';
export const API_STAGE_NAME_VARIABLE = 'API_STAGE_NAME';

/** A deployed stage of the REST API. */
export interface ApiStage {
  readonly restApiId: string;
  readonly stageName: string;
}

export type ApiGatewayCalls = Pick<APIGatewayClient, 'send'>;

/** What a flush needs of API Gateway: the one call (the local server's stand-in answers only it). */
export interface AuthorizerCacheFlushCalls {
  send(command: FlushStageAuthorizersCacheCommand): Promise<unknown>;
}

/** The stage the environment names, or undefined (where no stack set them: a test's function, a local tool). */
export const apiStageOf = (env: Readonly<Record<string, string | undefined>> = process.env): ApiStage | undefined => {
  const restApiId = env[REST_API_ID_VARIABLE];
  const stageName = env[API_STAGE_NAME_VARIABLE];
  return restApiId && stageName ? { restApiId, stageName } : undefined;
};

/** Drops every answer the stage's authorizer cache holds: the next request of each key runs the authorizer. */
export const flushAuthorizerCache = async (apiGateway: AuthorizerCacheFlushCalls, { restApiId, stageName }: ApiStage): Promise<void> => {
  await apiGateway.send(new FlushStageAuthorizersCacheCommand({ restApiId, stageName }));
};

/** The command an operator runs to flush it by hand. */
export const flushCommandLine = ({ restApiId, stageName }: ApiStage): string =>
  `aws apigateway flush-stage-authorizers-cache --rest-api-id ${restApiId} --stage-name ${stageName}`;

/** One API Gateway client per container, made at its first flush. */
let apiGatewayClient: APIGatewayClient | undefined;

/**
 * The flush of the stage the environment names (REST_API_ID, API_STAGE_NAME, set by the stack), in
 * the function's own region; undefined where it names none. `apiGateway` is the function's own
 * client by default; the local server passes its gateway's stand-in for the call.
 */
export const stageAuthorizerCacheFlush = (
  env: Readonly<Record<string, string | undefined>> = process.env,
  apiGateway: () => AuthorizerCacheFlushCalls = () => (apiGatewayClient ??= new APIGatewayClient({})),
): (() => Promise<void>) | undefined => {
  const stage = apiStageOf(env);
  return stage === undefined ? undefined : () => flushAuthorizerCache(apiGateway(), stage);
};
