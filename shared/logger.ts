/**
 * The structured logger (Powertools): one JSON object a line, as CloudWatch Logs Insights reads
 * it. Lines carry their request's fields explicitly rather than through appended keys, because
 * the local server runs many requests at once in one process.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { tableNames } from './config';
import { PROJECT_NAME } from './project';

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? PROJECT_NAME });

const ARN = /arn:aws[\w-]*:[^\s"',]+/g;

/** A name as a word of its own, not as part of a path or a longer name ("/pets" stays). */
const standalone = (name: string) => new RegExp(`(?<![\\w/.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/.-])`, 'g');

/**
 * What may be logged of an unexpected error: its name and its message with ARNs and table names
 * taken out. Never the stack trace, and never the error object itself (it may hold the request).
 */
export const safeErrorFields = (error: unknown): { errorName: string; errorMessage: string } => {
  if (!(error instanceof Error)) return { errorName: typeof error, errorMessage: 'non-Error value thrown' };
  let message = error.message.replace(ARN, '<arn>');
  for (const table of Object.values(tableNames())) message = message.replace(standalone(table), '<table>');
  return { errorName: error.name, errorMessage: message.slice(0, 300) };
};
