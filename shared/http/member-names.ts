/**
 * I-JSON (RFC 7493) requires the member names of an object to be unique; JSON.parse lets the
 * last one win silently. This scans text already known to be valid JSON and finds the first
 * name repeated in one object, at any depth, comparing names after unescaping.
 */

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** The first member name that appears twice in one object of `json` (valid JSON text), or undefined. */
export const repeatedMemberName = (json: string): string | undefined => {
  // One entry per open container: the names seen so far in an object, undefined for an array.
  const open: Array<Set<string> | undefined> = [];
  // Whether the next string is a member name: after `{`, and after `,` inside an object.
  let nameNext = false;
  for (let index = 0; index < json.length; index += 1) {
    const char = json.charCodeAt(index);
    if (char === QUOTE) {
      const start = index;
      index += 1;
      let escaped = false;
      for (; json.charCodeAt(index) !== QUOTE; index += 1) {
        if (json.charCodeAt(index) === BACKSLASH) {
          escaped = true;
          index += 1; // skip the escaped character, which may be a quote
        }
      }
      if (!nameNext) continue;
      nameNext = false;
      const name = escaped ? (JSON.parse(json.slice(start, index + 1)) as string) : json.slice(start + 1, index);
      const names = open.at(-1);
      if (names?.has(name)) return name;
      names?.add(name);
    } else if (char === OPEN_OBJECT) {
      open.push(new Set());
      nameNext = true;
    } else if (char === OPEN_ARRAY) {
      open.push(undefined);
      nameNext = false;
    } else if (char === CLOSE_OBJECT || char === CLOSE_ARRAY) {
      open.pop();
      nameNext = false;
    } else if (char === COMMA) {
      nameNext = open.at(-1) !== undefined;
    }
  }
  return undefined;
};
