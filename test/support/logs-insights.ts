/**
 * The Logs Insights subset the saved queries use (infra/log-queries.ts), read closely enough to
 * check them against real log lines: which fields each command reads, and whether a line passes
 * its `filter` commands. Anything outside the subset throws, so a new construct is noticed.
 */

/** Fields Logs Insights itself gives every line (or REPORT lines): allowed without being in a line. */
export const BUILT_IN_FIELDS: ReadonlySet<string> = new Set([
  '@timestamp',
  '@message',
  '@log',
  '@logStream',
  '@ingestionTime',
  '@duration',
]);

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'like', 'by', 'as', 'asc', 'desc']);
const COMMANDS = new Set(['fields', 'filter', 'stats', 'sort', 'limit']);

/** A `quoted` name is a field whatever it spells (`` `by` ``); a bare name may be a keyword or a function. */
type Token = { readonly kind: 'string' | 'number' | 'name' | 'quoted' | 'punctuation'; readonly text: string };

const TOKEN = /\s*(?:("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(\d+(?:\.\d+)?)|(`[^`]+`|[A-Za-z_@][\w.@]*)|(!=|<=|>=|[=<>(),[\]*]))/y;

const tokenize = (text: string): Token[] => {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.trimEnd().length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (!match) throw new Error(`Not in the Logs Insights subset at ${at}: ${text.slice(at)}`);
    const [, string, number, name, punctuation] = match;
    if (string !== undefined)
      tokens.push({ kind: 'string', text: JSON.parse(string.startsWith("'") ? `"${string.slice(1, -1)}"` : string) as string });
    else if (number !== undefined) tokens.push({ kind: 'number', text: number });
    else if (name !== undefined)
      tokens.push(name.startsWith('`') ? { kind: 'quoted', text: name.slice(1, -1) } : { kind: 'name', text: name });
    else tokens.push({ kind: 'punctuation', text: punctuation ?? '' });
  }
  return tokens;
};

export interface Command {
  readonly name: string;
  /** Its text after the command's name. */
  readonly body: string;
}

/** The query's commands, split at each `|` outside a string. */
export const commandsOf = (query: string): Command[] => {
  const commands: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (const character of query) {
    if (quote) {
      if (character === quote) quote = undefined;
    } else if (character === '"' || character === "'" || character === '`') quote = character;
    else if (character === '|') {
      commands.push(current);
      current = '';
      continue;
    }
    current += character;
  }
  commands.push(current);
  return commands.map((text) => {
    const [, name = '', body = ''] = /^\s*(\w+)\s*([\s\S]*)$/.exec(text) ?? [];
    if (!COMMANDS.has(name)) throw new Error(`Not a command of the subset: ${text.trim()}`);
    return { name, body: body.trim() };
  });
};

/**
 * The fields a query reads, in any command: every name that is not a keyword, a function (a name
 * before `(`), a name given with `as`, or a built-in field of Logs Insights.
 */
export const fieldsOf = (query: string): string[] => {
  const commands = commandsOf(query);
  const tokens = commands.map(({ body }) => tokenize(body));
  const aliases = new Set(
    tokens.flatMap((list) => list.flatMap((token, index) => (token.text === 'as' && list[index + 1] ? [list[index + 1]!.text] : []))),
  );
  const fields = new Set<string>();
  for (const list of tokens) {
    list.forEach((token, index) => {
      if (token.kind === 'quoted') return void fields.add(token.text);
      if (token.kind !== 'name' || KEYWORDS.has(token.text) || aliases.has(token.text) || BUILT_IN_FIELDS.has(token.text)) return;
      if (list[index + 1]?.text === '(') return;
      fields.add(token.text);
    });
  }
  return [...fields];
};

/** A line's value at a dotted path (`record.metrics.initDurationMs`). */
export const valueAt = (line: Readonly<Record<string, unknown>>, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (value, part) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined),
      line,
    );

/** The fields a query reads that none of the lines has: what a renamed field leaves behind. */
export const fieldsMissingFrom = (query: string, lines: ReadonlyArray<Readonly<Record<string, unknown>>>): string[] =>
  fieldsOf(query).filter((field) => !lines.some((line) => valueAt(line, field) !== undefined));

const literal = (token: Token | undefined): unknown => {
  if (token?.kind === 'string') return token.text;
  if (token?.kind === 'number') return Number(token.text);
  throw new Error(`Expected a string or a number, got ${token?.text ?? 'nothing'}`);
};

/** One `filter` command's condition: `and` of `ispresent(f)`, `f = v`, `f != v` and `f in [v, …]`. */
const condition = (body: string): ((line: Readonly<Record<string, unknown>>) => boolean) => {
  const tokens = tokenize(body);
  const terms: Array<(line: Readonly<Record<string, unknown>>) => boolean> = [];
  let index = 0;
  const next = () => tokens[index++];
  const expect = (text: string) => {
    const token = next();
    if (token?.text !== text) throw new Error(`Expected ${text} in filter ${body}`);
  };
  while (index < tokens.length) {
    const first = next();
    if (first?.kind !== 'name' && first?.kind !== 'quoted') throw new Error(`Not in the filter subset: ${body}`);
    if (first.kind === 'name' && first.text === 'ispresent') {
      expect('(');
      const field = next()?.text ?? '';
      expect(')');
      terms.push((line) => valueAt(line, field) !== undefined);
    } else {
      const operator = next()?.text;
      if (operator === '=' || operator === '!=') {
        const value = literal(next());
        terms.push((line) => (valueAt(line, first.text) === value) === (operator === '='));
      } else if (operator === 'in') {
        expect('[');
        const values: unknown[] = [];
        for (let token = next(); token?.text !== ']'; token = next()) if (token?.text !== ',') values.push(literal(token));
        terms.push((line) => values.includes(valueAt(line, first.text)));
      } else throw new Error(`Not in the filter subset: ${body}`);
    }
    if (index < tokens.length) expect('and');
  }
  return (line) => terms.every((term) => term(line));
};

/** Whether a line passes every `filter` command of the query. Values compare by type: `"429"` is not `429`. */
export const passesFilters = (query: string, line: Readonly<Record<string, unknown>>): boolean =>
  commandsOf(query)
    .filter(({ name }) => name === 'filter')
    .every(({ body }) => condition(body)(line));

/**
 * CloudWatch Logs' JSON filter pattern, the subset the metric filters use: `{ $.a = "x" }`,
 * `!=`, `= "*"` (any value), `NOT EXISTS`, `IS TRUE`, joined by `&&` or by `||` (not both), each
 * term in parentheses or not.
 */
export const matchesFilterPattern = (pattern: string, line: Readonly<Record<string, unknown>>): boolean => {
  const inner = /^\{\s*([\s\S]*?)\s*\}$/.exec(pattern.trim())?.[1];
  if (inner === undefined) throw new Error(`Not a JSON filter pattern: ${pattern}`);
  const joiner = inner.includes('&&') ? '&&' : '||';
  if (inner.includes('&&') && inner.includes('||')) throw new Error(`Mixed && and || are not in the subset: ${pattern}`);
  const results = inner.split(joiner).map((term) => {
    const unary = /^\(?\s*\$\.([\w.]+)\s+(NOT EXISTS|IS TRUE)\s*\)?$/.exec(term.trim());
    if (unary) {
      const value = valueAt(line, unary[1] ?? '');
      return unary[2] === 'NOT EXISTS' ? value === undefined : value === true;
    }
    const match = /^\(?\s*\$\.([\w.]+)\s*(=|!=)\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)\s*\)?$/.exec(term.trim());
    if (!match) throw new Error(`Not in the filter pattern subset: ${term}`);
    const [, path = '', operator, raw = ''] = match;
    const actual = valueAt(line, path);
    // A quoted `*` is CloudWatch's wildcard: the field holds a value.
    const matched =
      raw === '"*"' ? actual !== undefined && actual !== null : actual === (raw.startsWith('"') ? JSON.parse(raw) : Number(raw));
    return matched === (operator === '=');
  });
  return joiner === '&&' ? results.every(Boolean) : results.some(Boolean);
};
