/**
 * The gate's own rules on top of api-smart-diff's classification, where the tool's would let a
 * client of /v1 break or would hold a harmless edit:
 * - a property removed from a request body or a parameter breaks: the request models refuse
 *   members they do not know (`additionalProperties: false`), so a client still sending it gets 400;
 * - any change of what a value is (`type`, `format`, `const`) breaks, wherever it is: in an answer
 *   the value may be one a client cannot read (an integer becoming any number, a string null);
 * - examples, descriptions, summaries and the top-level tags are annotations: no client reads them.
 * What the tool says breaks stays breaking.
 */
import type { Diff, DiffType } from 'api-smart-diff';

type Segment = string | number;

/** Keywords whose members are named by the document (a property, a status, a media type), not keywords. */
const NAME_MAPS = new Set([
  'paths',
  'webhooks',
  'schemas',
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
  'parameters',
  'requestBodies',
  'responses',
  'headers',
  'content',
  'encoding',
  'links',
  'callbacks',
  'variables',
  'securitySchemes',
  'mapping',
]);
/** Keywords whose value is data: what a path goes on with inside them is no keyword. */
const VALUES = new Set(['type', 'format', 'const', 'enum', 'default', 'required', 'example', 'examples']);

const VALUE_KINDS = new Set(['type', 'format', 'const']);
const ANNOTATIONS = new Set(['description', 'summary', 'example', 'examples']);

interface Keyword {
  readonly name: string;
  readonly at: number;
}

/** The keywords along a diff's path, leaving out names (a property called `type`) and what values hold. */
const keywordsOf = (path: readonly Segment[]): Keyword[] => {
  const keywords: Keyword[] = [];
  for (let at = 0; at < path.length; at += 1) {
    const segment = path[at];
    if (typeof segment !== 'string') continue; // an index: allOf/0, parameters/1
    keywords.push({ name: segment, at });
    if (VALUES.has(segment)) break;
    if (NAME_MAPS.has(segment)) at += 1; // the next segment names a member
  }
  return keywords;
};

/** Under an operation's (or a path item's) request body or parameters: what a client sends. */
const isSentByClients = (path: readonly Segment[]) =>
  path[0] === 'paths' && (path[2] === 'parameters' || path[3] === 'parameters' || path[3] === 'requestBody');

const removesSentProperty = (diff: Diff, keywords: readonly Keyword[]) => {
  const last = keywords.at(-1);
  return diff.action === 'remove' && isSentByClients(diff.path) && last?.name === 'properties' && last.at === diff.path.length - 2;
};

/** The gate's classification of one of the tool's findings. */
export const gateType = (diff: Diff): DiffType => {
  if (diff.type === 'breaking') return diff.type;
  const keywords = keywordsOf(diff.path);
  if (keywords.some(({ name }) => VALUE_KINDS.has(name)) || removesSentProperty(diff, keywords)) return 'breaking';
  if (diff.path[0] === 'tags' || keywords.some(({ name }) => ANNOTATIONS.has(name))) return 'annotation';
  return diff.type;
};
