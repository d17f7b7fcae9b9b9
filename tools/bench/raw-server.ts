/**
 * The raw baseline: a minimal node:http server sending the same DynamoDB calls as the API, with
 * the same client settings, and nothing else (no auth, no validation, no middleware, no logs).
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDocumentClient } from '../../shared/dynamodb';
import { newPetId } from '../../shared/ids';
import type { PetStatus } from '../../shared/models';
import { statusShardOf } from '../../shared/pets-repository';
import { petsStatusIndex } from '../../shared/tables';

const PROJECTION = {
  ProjectionExpression: '#id, #name, categoryId, #status',
  ExpressionAttributeNames: { '#id': 'id', '#name': 'name', '#status': 'status' },
};

export const startRawServer = async (endpoint: string, tableName: string) => {
  const client = createDocumentClient({ endpoint });
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://raw');
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method === 'GET' && url.pathname === '/v1/pets') {
        const limit = Number(url.searchParams.get('limit') ?? 20);
        const { Items = [] } = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: petsStatusIndex.indexName,
            // One shard, as the API's listing with the default shard count.
            KeyConditionExpression: '#shard = :shard',
            ...PROJECTION,
            ExpressionAttributeNames: { ...PROJECTION.ExpressionAttributeNames, '#shard': petsStatusIndex.partitionKey.name },
            ExpressionAttributeValues: { ':shard': `${url.searchParams.get('status')}#0` },
            Limit: limit + 1,
          }),
        );
        return answer(200, Items.slice(0, limit));
      }
      if (req.method === 'GET' && url.pathname.startsWith('/v1/pets/')) {
        const { Item } = await client.send(
          new GetCommand({
            TableName: tableName,
            Key: { id: Number(url.pathname.slice('/v1/pets/'.length)) },
            ConsistentRead: true,
            ...PROJECTION,
          }),
        );
        return answer(Item ? 200 : 404, Item ?? {});
      }
      if (req.method === 'POST' && url.pathname === '/v1/pets') {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const pet = { id: newPetId(), status: 'available' as PetStatus, ...(JSON.parse(Buffer.concat(chunks).toString()) as object) };
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...pet,
              [petsStatusIndex.partitionKey.name]: statusShardOf(pet.status, pet.id, 1),
              createdAt: new Date().toISOString(),
            },
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': 'id' },
          }),
        );
        return answer(201, pet);
      }
      answer(404, {});
    } catch {
      answer(500, {});
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    /** Its DynamoDB client, so a benchmark can instrument both servers' clients alike. */
    client,
    close: async () => {
      server.closeAllConnections();
      server.close();
      client.destroy();
    },
  };
};
