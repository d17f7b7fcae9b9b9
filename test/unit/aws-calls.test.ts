/**
 * How the IAM check's recorder names a DynamoDB command: the actions IAM evaluates and the
 * condition keys AWS documents for them (dynamodb:Attributes, LeadingKeys, ReturnValues, Select).
 */
import { describe, expect, it } from 'vitest';
import { dynamodbCalls, functionRef } from '../support/aws-calls';

const tables = { pets: 'pets-1', apiKeys: 'api-keys-1', idempotency: 'idempotency-1' };

describe('dynamodbCalls', () => {
  it("names an update's key, the attributes of its expressions, its partition key value and its ReturnValues", () => {
    const [call] = dynamodbCalls(
      'authorizer',
      'UpdateCommand',
      {
        TableName: 'api-keys-1',
        Key: { keyHash: 'abc' },
        UpdateExpression: 'SET #lastUsedAt = :now',
        ConditionExpression: 'attribute_exists(keyHash) AND (attribute_not_exists(#lastUsedAt) OR #lastUsedAt < :before)',
        ExpressionAttributeNames: { '#lastUsedAt': 'lastUsedAt' },
        ReturnValues: 'NONE',
      },
      tables,
    );
    expect(call).toEqual({
      function: 'authorizer',
      action: 'dynamodb:UpdateItem',
      resource: { kind: 'table', table: 'apiKeys' },
      context: { 'dynamodb:Attributes': ['keyHash', 'lastUsedAt'], 'dynamodb:LeadingKeys': ['abc'], 'dynamodb:ReturnValues': 'NONE' },
    });
  });

  it('makes each item of a transaction its own action, on its own table, inside TransactWriteItems', () => {
    const calls = dynamodbCalls(
      'createPet',
      'TransactWriteCommand',
      {
        TransactItems: [
          { Put: { TableName: 'pets-1', Item: { id: { N: '7' }, name: { S: 'Rex' } }, ConditionExpression: 'attribute_not_exists(id)' } },
          { Put: { TableName: 'idempotency-1', Item: { id: 'caller#key', petId: 7 } } },
        ],
      },
      tables,
    );
    expect(
      calls.map(({ action, resource, context }) => [
        action,
        resource,
        context['dynamodb:LeadingKeys'],
        context['dynamodb:EnclosingOperation'],
      ]),
    ).toEqual([
      ['dynamodb:PutItem', { kind: 'table', table: 'pets' }, ['7'], 'TransactWriteItems'],
      ['dynamodb:PutItem', { kind: 'table', table: 'idempotency' }, ['caller#key'], 'TransactWriteItems'],
    ]);
  });

  it('names an index query by its index, and leaves out tables that are not the stack’s (the local audit log)', () => {
    expect(
      dynamodbCalls('listPets', 'QueryCommand', { TableName: 'pets-1', IndexName: 'status-id-index', Select: 'ALL_ATTRIBUTES' }, tables),
    ).toEqual([
      {
        function: 'listPets',
        action: 'dynamodb:Query',
        resource: { kind: 'table', table: 'pets', index: 'status-id-index' },
        context: { 'dynamodb:Select': 'ALL_ATTRIBUTES' },
      },
    ]);
    expect(dynamodbCalls('keyAudit', 'PutCommand', { TableName: 'api-keys-1-audit-log', Item: { eventId: '1' } }, tables)).toEqual([]);
  });
});

describe('functionRef', () => {
  it('names a function by its name in the stack, from a deployed name or ARN, with its qualifier', () => {
    expect(functionRef('arn:aws:lambda:eu-west-1:123456789012:function:pet-store-prod-listPets:7')).toEqual({
      kind: 'function',
      function: 'listPets',
      qualifier: '7',
    });
    expect(functionRef('pet-store-staging-authorizer')).toEqual({ kind: 'function', function: 'authorizer' });
  });
});
