/**
 * What the deployed bundles have in place of `@aws-sdk/lib-dynamodb`'s entry (infra/bundling.ts
 * aliases it here). Its entry re-exports every command and builds its two paginators at import,
 * calls esbuild must keep, so every bundle held the Query and Scan commands and the paginator
 * machinery whether it lists or not. This re-exports the same modules by path (what the project
 * imports, nothing else), and builds the paginators as the package does, marked pure, so that a
 * bundle holds the commands it sends and no other. JavaScript, not TypeScript: the package's
 * modules have no types beside them, and the project compiles against the package's own
 * (the local server and the tests run on the package as published).
 */
import { createPaginator } from '@smithy/core';
import { DynamoDBDocumentClient } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/DynamoDBDocumentClient.js';
import { QueryCommand } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/commands/QueryCommand.js';
import { ScanCommand } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/commands/ScanCommand.js';

export { DynamoDBDocumentClient, QueryCommand, ScanCommand };
export { DeleteCommand } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/commands/DeleteCommand.js';
export { GetCommand } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/commands/GetCommand.js';
export { PutCommand } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/commands/PutCommand.js';
export { TransactWriteCommand } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/commands/TransactWriteCommand.js';
export { UpdateCommand } from '../../node_modules/@aws-sdk/lib-dynamodb/dist-es/commands/UpdateCommand.js';

// As @aws-sdk/lib-dynamodb/dist-es/pagination/*Paginator.js build them.
export const paginateQuery = /* @__PURE__ */ createPaginator(
  DynamoDBDocumentClient,
  QueryCommand,
  'ExclusiveStartKey',
  'LastEvaluatedKey',
  'Limit',
);
export const paginateScan = /* @__PURE__ */ createPaginator(
  DynamoDBDocumentClient,
  ScanCommand,
  'ExclusiveStartKey',
  'LastEvaluatedKey',
  'Limit',
);
