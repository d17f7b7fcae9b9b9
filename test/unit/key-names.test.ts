/** The one rule for a key's name (shared/key-names.ts), which every writer of a name applies. */
import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../../shared/api-keys';
import { checkKeyName, InvalidKeyName, KEY_NAME_MAX_LENGTH } from '../../shared/key-names';

const problemOf = (name: unknown): string | undefined => {
  try {
    checkKeyName(name);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidKeyName);
    return (error as InvalidKeyName).problem;
  }
};

describe('checkKeyName', () => {
  it('takes 1 to 128 characters, counted as a reader counts them (code points), in any script', () => {
    for (const name of ['x', 'ci', 'déploiement nocturne', '夜间部署', 'n'.repeat(KEY_NAME_MAX_LENGTH), '🐕'.repeat(KEY_NAME_MAX_LENGTH)]) {
      expect(checkKeyName(name)).toBe(name);
    }
  });

  it('refuses an empty, blank or longer name', () => {
    expect(problemOf('')).toBe('must not be empty');
    expect(problemOf('  ')).toBe('must not be blank');
    expect(problemOf('n'.repeat(KEY_NAME_MAX_LENGTH + 1))).toBe('must be at most 128 characters');
    expect(problemOf('n'.repeat(250_000))).toBe('must be at most 128 characters');
  });

  it('refuses every C0 control character, DEL and every C1 control character, wherever it is', () => {
    const controls = [...Array.from({ length: 0x20 }, (_, code) => code), 0x7f, ...Array.from({ length: 0x20 }, (_, code) => 0x80 + code)];
    for (const code of controls) {
      expect(problemOf(`ci${String.fromCharCode(code)}x`), code.toString(16)).toMatch(/^must not contain control characters/);
    }
  });

  it('refuses every bidirectional mark, embedding, override and isolate, and the line and paragraph separators', () => {
    const range = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, index) => first + index);
    const reordering = [0x200e, 0x200f, ...range(0x202a, 0x202e), ...range(0x2066, 0x2069), 0x2028, 0x2029];
    for (const code of reordering) {
      expect(problemOf(`ci${String.fromCodePoint(code)}x`), code.toString(16)).toMatch(
        /^must not contain bidirectional or line-separator characters/,
      );
    }
    // Other format characters (a zero-width joiner in an emoji, a soft hyphen) stay names: the tools print them escaped.
    for (const name of ['👩\u200d💻 deploy', 'co\u00adop']) expect(checkKeyName(name)).toBe(name);
  });

  it('refuses a lone surrogate, a value that is not text, and a name holding an API key, never repeating the name', () => {
    expect(problemOf('ci\ud800')).toBe('must be well-formed Unicode (no lone surrogates)');
    expect(problemOf(42)).toBe('must be a string');
    const key = generateApiKey();
    const refused = problemOf(`ci ${key}`);
    expect(refused).toContain('looks like an API key (not shown here)');
    expect(refused).not.toContain(key.slice(9, 30));
  });
});
