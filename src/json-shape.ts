// Strict JSON: JSON.parse accepts documents this service never wants (keys given twice, where
// the last silently wins; nesting thousands deep; numbers of any length). One pass over the text
// finds those before JSON.parse sees it; JSON.parse then checks the syntax. Request bodies and
// the config file are both read this way.
import { MAX_JSON_DEPTH, MAX_JSON_NUMBER_CHARS } from './limits.ts';

const NUMBER_CHAR = /[-+0-9.eE]/;

/**
 * What is wrong with the text's shape ("has the key "x" twice", "is nested deeper than ...", an
 * overlong or out-of-range number), or undefined.
 */
export function jsonShapeProblem(text: string): string | undefined {
  // One frame a level of nesting: an object's keys so far (undefined in an array), and whether a key comes next.
  const stack: { keys: Set<string> | undefined; expectKey: boolean }[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (top?.keys && top.expectKey) {
        let key = text.slice(i + 1, end);
        try {
          if (/[\\\u0000-\u001f]/.test(key)) key = JSON.parse(text.slice(i, end + 1)) as string; // else it is as written
        } catch {
          return undefined; // malformed string: JSON.parse will say so
        }
        if (top.keys.has(key)) return `has the key "${key.slice(0, 64)}" twice`;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      if (stack.length >= MAX_JSON_DEPTH) return `is nested deeper than ${MAX_JSON_DEPTH} levels`;
      stack.push({ keys: c === '{' ? new Set() : undefined, expectKey: c === '{' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack.at(-1);
      if (top?.keys) top.expectKey = true;
    } else if ((c >= '0' && c <= '9') || c === '-') {
      let end = i;
      while (end < text.length && NUMBER_CHAR.test(text[end]!)) end++;
      if (end - i > MAX_JSON_NUMBER_CHARS) return `has a number longer than ${MAX_JSON_NUMBER_CHARS} characters`;
      if (!Number.isFinite(Number(text.slice(i, end)))) return 'has a number out of range';
      i = end - 1;
    }
  }
  return undefined;
}
