/**
 * `npm run costs [-- --check]`: measures what each operation uses on a DynamoDB Local of its own,
 * reads each stage's templates, and writes generated/costs.md; with --check, fails (exit 1) when
 * the file is not what it would write.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../../shared/dynamodb';
import { projectRoot } from '../../shared/project-root';
import { tableNamesOf, type TableNames } from '../../shared/tables';
import { ensureApiTables, startDynamoDBLocal } from '../dynamodb-local';
import { measureOperations } from './measure';
import { stageResources } from './stage-resources';
import { costedStages, costsMarkdown, COSTS_PATH, shardsOf } from './table';

const main = async (): Promise<number> => {
  const { values } = parseArgs({ options: { check: { type: 'boolean' } } });
  const database = await startDynamoDBLocal({ port: 0 });
  try {
    const freshTables = async (): Promise<TableNames> => {
      const suffix = randomUUID().slice(0, 8);
      const names = tableNamesOf(({ defaultName }) => `${defaultName}-${suffix}`);
      const client = createDocumentClient({ endpoint: database.endpoint });
      await ensureApiTables(client, names);
      client.destroy();
      return names;
    };
    const stages = costedStages();
    const usage = new Map<number, Awaited<ReturnType<typeof measureOperations>>>();
    for (const shards of new Set(stages.map(shardsOf))) {
      usage.set(shards, await measureOperations({ endpoint: database.endpoint, freshTables, statusShards: shards }));
    }
    const resources = Object.fromEntries(stages.map((stage) => [stage, stageResources(stage)]));
    const markdown = costsMarkdown({
      resources,
      usageAt: (shards) => {
        const measured = usage.get(shards);
        if (!measured) throw new Error(`not measured at ${shards} shards`);
        return measured;
      },
    });
    const path = join(projectRoot, COSTS_PATH);
    if (values.check) {
      const current = readFileSync(path, 'utf8');
      if (current !== markdown) {
        console.error(`npm run costs -- --check: ${COSTS_PATH} is stale: run npm run costs`);
        return 1;
      }
      console.log(`${COSTS_PATH} is up to date.`);
      return 0;
    }
    writeFileSync(path, markdown);
    console.log(`Wrote ${COSTS_PATH}.`);
    return 0;
  } finally {
    await database.stop();
  }
};

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error);
  process.exitCode = 2;
}
