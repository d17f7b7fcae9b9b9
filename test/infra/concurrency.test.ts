/**
 * Reserved concurrency in the synthesized template: none unless the stage asks, and when it does,
 * the authorizer's own and each operation's function's (from the route table); the other
 * functions stay on the account's unreserved executions.
 */
import { describe, expect, it } from 'vitest';
import { functionNameOf } from '../../infra/constructs/names';
import { PROJECT_NAME } from '../../shared/project';
import { routes } from '../../shared/routes';
import { resourcesOf, synthStage } from './synth';

/** Each function's ReservedConcurrentExecutions, by its name. */
const reservationsOf = (synthesized: ReturnType<typeof synthStage>) =>
  new Map(
    resourcesOf(synthesized.template, 'AWS::Lambda::Function').map(({ properties }) => [
      String(properties.FunctionName),
      properties.ReservedConcurrentExecutions,
    ]),
  );

describe('reserved concurrency', () => {
  it.each(['staging', 'prod'])('is off on %s: no function reserves any', (stage) => {
    const functions = resourcesOf(synthStage(stage).template, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(0);
    for (const { logicalId, properties } of functions) expect(properties.ReservedConcurrentExecutions, logicalId).toBeUndefined();
  });

  it("when set, reserves the authorizer's executions and caps each operation's function; no other function", () => {
    const stage = 'staging';
    const reservedConcurrency = { authorizer: 200, eachOperation: 150 };
    const reservations = reservationsOf(synthStage(stage, { reservedConcurrency }));
    const nameOf = (name: string) => functionNameOf(`${PROJECT_NAME}-${stage}`, name);
    const operations = routes.flatMap((route) => ('handler' in route ? [nameOf(route.operationId)] : []));

    expect(reservations.get(nameOf('authorizer'))).toBe(reservedConcurrency.authorizer);
    for (const name of operations) expect(reservations.get(name), name).toBe(reservedConcurrency.eachOperation);
    const others = [...reservations].filter(([name]) => name !== nameOf('authorizer') && !operations.includes(name));
    // The key audit trail's two functions and the release's pre-traffic hook.
    expect(others.length).toBeGreaterThanOrEqual(3);
    for (const [name, reserved] of others) expect(reserved, name).toBeUndefined();
  });
});
