/**
 * Response headers the released contract requires and the current document lists without
 * requiring. The generator writes a response header as `{ $ref, required: true }`, and
 * api-smart-diff ignores what stands next to a `$ref`, so it never sees that flag change; the gate
 * compares the flags itself. A header gone altogether is the tool's own finding (breaking).
 */
import type { Diff } from 'api-smart-diff';
import { dereference, HTTP_METHODS, isRecord } from './place';

/** The node at `keys`, following `$ref`s on the way. */
const nodeAt = (document: unknown, keys: readonly string[]): unknown =>
  keys.reduce<unknown>((node, key) => dereference(document, isRecord(node) ? node[key] : undefined), dereference(document, document));

/** A map's members as written: a header's `$ref` is kept, since its `required` flag stands next to it. */
const membersOf = (node: unknown): Array<[string, unknown]> => (isRecord(node) ? Object.entries(node) : []);

/** Required by the flag next to the header's `$ref`, or else by the Header Object's own. */
const isRequired = (document: unknown, header: unknown): boolean => {
  if (!isRecord(header)) return false;
  if (typeof header.required === 'boolean') return header.required;
  const target = dereference(document, header);
  return isRecord(target) && target.required === true;
};

/** One breaking finding, in the tool's shape, for each required response header now optional. */
export const requiredHeadersDropped = (released: unknown, current: unknown): Diff[] => {
  const dropped: Diff[] = [];
  for (const [route, pathItem] of membersOf(nodeAt(released, ['paths']))) {
    for (const [method] of membersOf(dereference(released, pathItem)).filter(([key]) => HTTP_METHODS.has(key))) {
      const responses = ['paths', route, method, 'responses'];
      for (const [status] of membersOf(nodeAt(released, responses))) {
        const headers = [...responses, status, 'headers'];
        const currentHeaders = nodeAt(current, headers);
        for (const [name, header] of membersOf(nodeAt(released, headers))) {
          const now = isRecord(currentHeaders) ? currentHeaders[name] : undefined;
          if (now === undefined || !isRequired(released, header) || isRequired(current, now)) continue;
          dropped.push({
            type: 'breaking',
            action: 'remove',
            path: [...headers, name, 'required'],
            before: true,
            description: 'a client that counts on the header may not get it',
          });
        }
      }
    }
  }
  return dropped;
};
