/**
 * JSON.parse keeps the last of two equal keys and says nothing; a mesh file with a duplicated key
 * is ambiguous, so it is refused. This scans text that JSON.parse already accepted.
 */

export interface DuplicateKey {
  readonly key: string;
  readonly line: number;
}

/** The first key repeated within one object, or undefined. Linear, iterative. */
export function firstDuplicateKey(text: string): DuplicateKey | undefined {
  const objects: (Set<string> | undefined)[] = []; // one entry per open {...} or [...] (undefined for arrays)
  let expectKey = false;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "\n") line++;
    else if (char === "{") {
      objects.push(new Set());
      expectKey = true;
    } else if (char === "[") objects.push(undefined);
    else if (char === "}" || char === "]") objects.pop();
    else if (char === ",") expectKey = objects[objects.length - 1] !== undefined;
    else if (char === '"') {
      const end = stringEnd(text, i);
      const keys = objects[objects.length - 1];
      if (expectKey && keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return { key, line };
        keys.add(key);
        expectKey = false;
      }
      i = end;
    }
  }
  return undefined;
}

/** Index of the quote closing the string that starts at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}
