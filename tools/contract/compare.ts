/**
 * The contract gate's judgement: how the current OpenAPI document differs from the released one,
 * one line per change, sorted into what breaks a client of the released interface (`breaking`),
 * what the diff tool could not classify so a person must look (`review`), and the rest
 * (`additive`: new operations and optional fields, descriptions, deprecations). The
 * classification is api-smart-diff's, corrected by the gate's own rules (rules.ts) and joined by
 * the response headers' `required` flags, which the tool cannot see (headers.ts); this module
 * chooses which findings count and names them.
 */
import { apiCompare, type Diff, type DiffType } from 'api-smart-diff';
import { requiredHeadersDropped } from './headers';
import { placeOf, type Place } from './place';
import { gateType } from './rules';

export interface ContractComparison {
  readonly breaking: readonly string[];
  readonly review: readonly string[];
  readonly additive: readonly string[];
}

/**
 * The tool resolves every `$ref` into the operations that use it and classifies each difference
 * there, in context (a removed enum value breaks a query parameter, not an answer). It reports the
 * same difference under components/ too, classified without that context, so those copies are
 * left out. What operations name rather than `$ref` (securitySchemes) is kept.
 */
const RESOLVED_COMPONENTS = new Set([
  'schemas',
  'responses',
  'parameters',
  'examples',
  'requestBodies',
  'headers',
  'links',
  'callbacks',
  'pathItems',
]);
const isResolvedComponent = (diff: Diff) => diff.path[0] === 'components' && RESOLVED_COMPONENTS.has(String(diff.path[1]));

const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);
/** A value short enough to print in a change's line (a long description is not): a scalar or a list of them (`type`). */
const isShortValue = (value: unknown) =>
  (isScalar(value) || (Array.isArray(value) && value.every(isScalar))) && JSON.stringify(value).length <= 60;
const quoted = (value: unknown) => JSON.stringify(value);

/** What happened, with the values when they are short enough to read and not named already. */
const whatHappened = (diff: Diff, place: Place): string => {
  const valueNamed = place.detail === 'required' || place.detail.startsWith('enum value');
  const value = (word: string, of: unknown) => (isShortValue(of) && !valueNamed ? `${word} (${quoted(of)})` : word);
  switch (diff.action) {
    case 'add':
      return value('added', diff.after);
    case 'remove':
      return value('removed', diff.before);
    case 'rename':
      return `renamed from ${quoted(diff.before)} to ${quoted(diff.after)}`;
    default:
      return isShortValue(diff.before) && isShortValue(diff.after)
        ? `changed from ${quoted(diff.before)} to ${quoted(diff.after)}`
        : 'changed';
  }
};

/** The tool's description without its closing "in Response 200 content (…)": the place says that already. */
const toolDescription = (diff: Diff): string =>
  (diff.description ?? '')
    .replace(/ (in|of|from|to) (Response \d+|Request Body) content \([^)]*\)$/, '')
    .replace(/ in \w+ parameter `[^`]*`$/, '')
    .trim();

interface Change {
  readonly diff: Diff;
  readonly place: Place;
  /** The gate's classification. */
  readonly type: DiffType;
}

/** Changes that are the same finding about the same field: a field and its `required` entry go together. */
const fieldKey = ({ type, diff, place }: Change) => JSON.stringify([type, diff.action, place.operation, place.location, place.field]);

const graver = (one: DiffType, other: DiffType): DiffType =>
  [one, other].find((type) => type === 'breaking') ?? [one, other].find((type) => type === 'unclassified') ?? one;

/**
 * A field added or removed with its `required` entry is one change, as grave as the graver of the
 * two (a request field removed breaks, though dropping its `required` entry alone would not).
 */
const joinRequired = (changes: readonly Change[]): Change[] => {
  const sameField = (one: Change, other: Change) =>
    one.diff.action === other.diff.action &&
    one.place.operation === other.place.operation &&
    one.place.location === other.place.location &&
    one.place.field === other.place.field;
  const isWholeField = ({ place }: Change) => place.field !== '' && place.detail === '';
  const isRequiredEntry = ({ place }: Change) => place.detail === 'required';
  return changes.map((change) => {
    const partners = changes.filter(
      (other) =>
        sameField(change, other) && (isWholeField(change) ? isRequiredEntry(other) : isRequiredEntry(change) && isWholeField(other)),
    );
    return { ...change, type: partners.reduce((type, other) => graver(type, other.type), change.type) };
  });
};

const lineOf = ({ diff, place }: Change, required: boolean): string => {
  const where = [place.location, place.field && `\`${place.field}\``, required && '(required)', place.detail].filter(Boolean).join(' ');
  const subject = [place.operation, where].filter(Boolean).join(': ');
  const description = toolDescription(diff);
  return `${subject}: ${whatHappened(diff, place)}${description ? ` — ${description}` : ''}`;
};

/** Lines in the tool's order, each once. */
const linesOf = (changes: readonly Change[]): string[] => {
  const wholeFields = new Set(changes.filter(({ place }) => place.field !== '' && place.detail === '').map(fieldKey));
  const requiredFields = new Set(changes.filter(({ place }) => place.detail === 'required').map(fieldKey));
  const lines = changes
    // A field added or removed with its `required` entry is one change: the field's line says "(required)".
    .filter((change) => !(change.place.detail === 'required' && wholeFields.has(fieldKey(change))))
    .map((change) => lineOf(change, change.place.detail === '' && requiredFields.has(fieldKey(change))));
  return [...new Set(lines)];
};

/** Compares the current document with the released one. Neither is changed. */
export const compareContracts = (released: unknown, current: unknown): ContractComparison => {
  // apiCompare may rewrite the objects it is given.
  const { diffs } = apiCompare(structuredClone(released), structuredClone(current));
  const headerDiffs = requiredHeadersDropped(released, current);
  // Those flags are headers.ts's to judge: a finding of the tool at the same place would say it twice.
  const headerPaths = new Set(headerDiffs.map(({ path }) => JSON.stringify(path)));
  const changes = joinRequired(
    [...diffs.filter((diff) => !isResolvedComponent(diff) && !headerPaths.has(JSON.stringify(diff.path))), ...headerDiffs].map((diff) => ({
      diff,
      place: placeOf(released, current, diff),
      type: gateType(diff),
    })),
  );
  return {
    breaking: linesOf(changes.filter(({ type }) => type === 'breaking')),
    review: linesOf(changes.filter(({ type }) => type === 'unclassified')),
    additive: linesOf(changes.filter(({ type }) => type !== 'breaking' && type !== 'unclassified')),
  };
};
