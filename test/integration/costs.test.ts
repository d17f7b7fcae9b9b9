/**
 * generated/costs.md is what the code, the stages' templates and the prices give now: each
 * operation's reads, writes and log bytes measured again here (its handler on DynamoDB Local,
 * which reports the capacity each call consumed), each stage's templates synthesized again. A
 * change to any of them that changes a figure fails here until `npm run costs` is run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { COST_LIMITS, fixedMonthlyCost, mixCostPerMillion, requestCost, type OperationUsage } from '../../infra/costs';
import { PRICES } from '../../infra/prices';
import { projectRoot } from '../../shared/project-root';
import { measureOperations, type CostedOperation } from '../../tools/costs/measure';
import { stageResources } from '../../tools/costs/stage-resources';
import { costedStages, costsMarkdown, COSTS_PATH, shardsOf, STATED_MIX } from '../../tools/costs/table';
import { createTestTables } from '../support/tables';

const stages = costedStages();
const usage = new Map<number, Record<CostedOperation, OperationUsage>>();
const resources = Object.fromEntries(stages.map((stage) => [stage, stageResources(stage)]));

beforeAll(async () => {
  const { endpoint } = await createTestTables([]);
  for (const shards of new Set(stages.map(shardsOf))) {
    usage.set(shards, await measureOperations({ endpoint, freshTables: () => createTestTables(), statusShards: shards }));
  }
}, 120_000);

const usageAt = (shards: number) => {
  const measured = usage.get(shards);
  if (!measured) throw new Error(`not measured at ${shards} shards`);
  return measured;
};

describe('the cost table', () => {
  it(`is ${COSTS_PATH} as generated now: run npm run costs when this fails`, () => {
    expect(readFileSync(join(projectRoot, COSTS_PATH), 'utf8')).toBe(costsMarkdown({ resources, usageAt }));
  });

  it("bills a keyed create's writes in every region of a stage in several", () => {
    const severalRegions = stages
      .map((stage) => [stage, resources[stage]] as const)
      .find(([, stageResources]) => (stageResources?.regions ?? 1) > 1);
    if (!severalRegions?.[1]) throw new Error('no stage in several regions to check');
    const [stage, multiRegion] = severalRegions;
    const created = usageAt(shardsOf(stage)).createPet;
    // The reservation of its id and its record, the pet and its status index entry; the sweep's two deletes.
    expect(created.writeUnits).toBe(6);
    const extraRegions = multiRegion.regions - 1;
    expect(requestCost(created, multiRegion) - requestCost(created, { ...multiRegion, regions: 1 })).toBeGreaterThanOrEqual(
      extraRegions * created.writeUnits * PRICES.dynamodbReplicatedWriteRequestUnit.usd,
    );
  });

  it.each(Object.entries(COST_LIMITS))('keeps %s within what it promises: the stated mix, and a month with no traffic', (stage, limit) => {
    const stageUsage = usageAt(shardsOf(stage));
    const stageResourcesOf = resources[stage];
    if (!stageResourcesOf) throw new Error(`${stage} is not in the cost table`);
    expect(mixCostPerMillion(STATED_MIX, (operationId) => requestCost(stageUsage[operationId], stageResourcesOf))).toBeLessThanOrEqual(
      limit.perMillionRequests,
    );
    expect(fixedMonthlyCost(stageResourcesOf)).toBeLessThanOrEqual(limit.monthWithoutTraffic);
  });
});
