/**
 * Relative links in Markdown files, and the ones that do not resolve: a target file that does not
 * exist, or a `#fragment` that no heading of the target has (GitHub's heading slugs). Links to
 * other sites are not followed; code blocks and code spans hold no links.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

export interface DocLink {
  /** The file the link is in, relative to the root. */
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

export interface BrokenLink extends DocLink {
  readonly problem: string;
}

/** Fenced code blocks (``` or ~~~) blanked out, line count kept, so line numbers stay true. */
const withoutFences = (markdown: string): string[] => {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker) return ((fence = marker), '');
    if (fence !== undefined) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      return '';
    }
    return line;
  });
};

const withoutCodeSpans = (line: string) => line.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length));

/** `[text](target)`, `![alt](target)` (optionally `<target>` or with a title), and `[label]: target`. */
const INLINE_LINK = /!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const DEFINITION = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/;

export const linksIn = (file: string, markdown: string): DocLink[] =>
  withoutFences(markdown).flatMap((raw, index) => {
    const line = withoutCodeSpans(raw);
    const targets = [...line.matchAll(INLINE_LINK)].map((match) => match[1] ?? '');
    const definition = DEFINITION.exec(line)?.[1];
    if (definition) targets.push(definition);
    return targets.map((target) => ({ file, line: index + 1, target: target.replace(/^<|>$/g, '') }));
  });

/** Another site, a mail address, or any URL with a scheme: not ours to check. */
const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** The text GitHub shows for a heading: inline code, emphasis, links and HTML reduced to their text. */
const headingText = (heading: string) =>
  heading
    .replace(/\s+#+\s*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*|_)(\S(?:.*?\S)?)\1/g, '$2');

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces as hyphens. */
export const slugOf = (heading: string): string =>
  headingText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** Every anchor a Markdown file has, repeated headings numbered as GitHub numbers them (`-1`, `-2`). */
export const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = slugOf(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
};

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** What is wrong with one link, or undefined when it resolves. */
const problemOf = (root: string, link: DocLink): string | undefined => {
  const [pathPart = '', fragment] = link.target.split('#', 2) as [string, string | undefined];
  const from = resolve(root, link.file);
  const target = pathPart === '' ? from : resolve(dirname(from), decoded(pathPart.split('?')[0] ?? ''));
  const inside = relative(root, target);
  if (inside.startsWith(`..${sep}`) || inside === '..') return 'points outside the repository';
  if (!existsSync(target)) return `${inside} does not exist`;
  if (fragment === undefined || fragment === '') return undefined;
  if (statSync(target).isDirectory() || !target.endsWith('.md')) return `#${fragment}: ${inside} has no headings`;
  const anchors = anchorsOf(readFileSync(target, 'utf8'));
  return anchors.has(decoded(fragment)) ? undefined : `no heading in ${inside} has the anchor #${fragment}`;
};

/** The relative links of these Markdown files (paths relative to root): the ones this check follows. */
export const relativeLinks = (root: string, files: readonly string[]): DocLink[] =>
  files.flatMap((file) => linksIn(file, readFileSync(resolve(root, file), 'utf8')).filter((link) => !isExternal(link.target)));

/** The relative links of these Markdown files that do not resolve. */
export const brokenLinks = (root: string, files: readonly string[]): BrokenLink[] =>
  relativeLinks(root, files).flatMap((link) => {
    const problem = problemOf(root, link);
    return problem === undefined ? [] : [{ ...link, problem }];
  });
