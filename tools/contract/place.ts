/**
 * Where in the API a difference between two OpenAPI documents lies, for people: the operation
 * (`GET /pets/{petId}`) and the place in it (`response 200 body`, `query parameter`, `request
 * body`), the field (`[].categoryId`) and what about it changed (`maxLength`, `enum value "sold"`).
 * The diff tool gives a JSON path; array indices in it count in the released document, except for
 * an item the current document adds.
 */
type Segment = string | number;

export interface Place {
  /** `GET /pets/{petId}`, a bare route for a change to a whole path item, or '' outside `paths`. */
  readonly operation: string;
  /** `response 200 body`, `query parameter \`status\``, … or a JSON path outside `paths`. */
  readonly location: string;
  /** The field inside a schema, `[]` standing for an array's items: `[].categoryId`; '' for none. */
  readonly field: string;
  /** What about it: a keyword (`maxLength`, `type`, `required`) or `enum value "sold"`; '' for the thing itself. */
  readonly detail: string;
}

export interface DiffAt {
  readonly path: readonly Segment[];
  readonly action: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

export const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const COMBINATORS = new Set(['allOf', 'anyOf', 'oneOf']);

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** Follows local `$ref`s (`#/components/parameters/status`), so a parameter's name can be read. */
export const dereference = (document: unknown, value: unknown): unknown => {
  for (let hops = 0; hops < 16 && isRecord(value) && typeof value.$ref === 'string' && value.$ref.startsWith('#/'); hops += 1) {
    value = value.$ref
      .slice(2)
      .split('/')
      .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), document);
  }
  return value;
};

const childOf = (document: unknown, node: unknown, key: Segment): unknown =>
  dereference(document, isRecord(node) ? (node as Record<Segment, unknown>)[key] : undefined);

const quoted = (value: unknown) => JSON.stringify(value) ?? String(value);

/** Names a schema's part: the field it belongs to and what about it changed. */
const schemaPlace = (rest: readonly Segment[], diff: DiffAt): { field: string; detail: string } => {
  const fields: string[] = [];
  let detail = '';
  for (let index = 0; index < rest.length; index += 1) {
    const segment = rest[index];
    const next = rest[index + 1];
    const itemValue = diff.action === 'add' ? diff.after : diff.before;
    if (segment === 'properties' && next !== undefined) {
      fields.push(String(next));
      index += 1;
    } else if (segment === 'items') {
      fields.push('[]');
    } else if (typeof segment === 'string' && COMBINATORS.has(segment) && next !== undefined) {
      index += 1; // a part of allOf: the fields it holds are the schema's own
    } else if (segment === 'required' && next !== undefined) {
      fields.push(String(itemValue));
      detail = 'required';
      break;
    } else if (segment === 'enum' && next !== undefined) {
      detail = `enum value ${quoted(itemValue)}`;
      break;
    } else {
      detail = rest.slice(index).join('/');
      break;
    }
  }
  return { field: fields.join('.'), detail };
};

const withSchema = (location: string, rest: readonly Segment[], diff: DiffAt): Omit<Place, 'operation'> => {
  if (rest[0] !== 'schema') return { location, field: '', detail: rest.join('/') };
  return { location, ...schemaPlace(rest.slice(1), diff) };
};

/** The place inside one operation: its parameters, request body or responses. */
const operationPlace = (released: unknown, current: unknown, operation: unknown, rest: readonly Segment[], diff: DiffAt) => {
  const [part, key, ...inner] = rest;
  if (part === undefined) return { location: '', field: '', detail: '' };
  if (part === 'parameters' && key !== undefined) {
    // A parameter added or removed as a whole is the diff's value; one changed inside is in the released document.
    const parameter =
      inner.length === 0
        ? diff.action === 'add'
          ? dereference(current, diff.after)
          : dereference(released, diff.before)
        : childOf(released, childOf(released, operation, 'parameters'), key);
    const name = isRecord(parameter) ? `${String(parameter.in)} parameter \`${String(parameter.name)}\`` : `parameter ${key}`;
    return withSchema(name, inner, diff);
  }
  if (part === 'requestBody') {
    const [mediaType, ...schema] = rest.slice(2);
    if (key === 'content' && mediaType !== undefined) return withSchema('request body', schema, diff);
    return { location: 'request body', field: '', detail: rest.slice(1).join('/') };
  }
  if (part === 'responses' && key !== undefined) {
    const response = `response ${key}`;
    const [kind, name, ...more] = inner;
    if (kind === 'headers' && name !== undefined) return withSchema(`${response} header \`${name}\``, more, diff);
    if (kind === 'content' && name !== undefined) return withSchema(`${response} body`, more, diff);
    return { location: response, field: '', detail: inner.join('/') };
  }
  return { location: rest.join('/'), field: '', detail: '' };
};

/** Names the place of one difference between the released document and the current one. */
export const placeOf = (released: unknown, current: unknown, diff: DiffAt): Place => {
  const [root, route, method, ...rest] = diff.path;
  if (root !== 'paths' || route === undefined) return { operation: '', location: diff.path.join('/'), field: '', detail: '' };
  const pathItem = childOf(released, childOf(released, released, 'paths'), route);
  if (typeof method === 'string' && HTTP_METHODS.has(method)) {
    const operation = childOf(released, pathItem, method);
    return { operation: `${method.toUpperCase()} ${route}`, ...operationPlace(released, current, operation, rest, diff) };
  }
  // A change to the path item as a whole (every operation on it), or to what its operations share.
  return { operation: String(route), location: diff.path.slice(2).join('/'), field: '', detail: '' };
};
