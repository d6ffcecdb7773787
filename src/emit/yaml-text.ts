/**
 * Block YAML for rendered values (`renderResult`'s JSON values), as the `yaml` package prints them
 * with `toYamlText`'s settings — byte for byte — but written directly: the package's document
 * model costs several times the rendering itself on a full node. Each distinct scalar and key is
 * still printed by the package (cached), so quoting follows its rules exactly; a value whose form
 * depends on its position in other ways than indentation (a folded or quoted multi-line string,
 * a very long key) hands the whole value back to the package.
 */
import { stringify } from "yaml";

/** `toYamlText`'s settings: no line folding, no anchors. */
export const YAML_OPTIONS = { lineWidth: 0, aliasDuplicateObjects: false } as const;

/** Thrown when a value needs the package's full printer. */
class NotBlockSafe extends Error {}

/** `value` as `stringify(value, YAML_OPTIONS)` prints it, or undefined when only the package can. */
export function blockYaml(value: unknown): string | undefined {
  try {
    const out = new YamlText();
    out.document(value);
    return out.text;
  } catch (error) {
    if (error instanceof NotBlockSafe) return undefined;
    throw error;
  }
}

type Plain = string | number | boolean | null;

const isCollection = (value: unknown): value is object => typeof value === "object" && value !== null;

class YamlText {
  text = "";
  private readonly values = new Map<Plain, string>();
  private readonly items = new Map<Plain, string>();
  private readonly keys = new Map<string, string>();

  document(value: unknown): void {
    if (Array.isArray(value)) {
      if (value.length === 0) this.text += "[]\n";
      else this.sequence(value, "");
    } else if (isCollection(value)) {
      if (entriesOf(value).length === 0) this.text += "{}\n";
      else this.mapping(value, "", false);
    } else {
      throw new NotBlockSafe();
    }
  }

  /** Each entry as `key: value` at `indent`; the first right here when `inline` (after a dash). */
  private mapping(value: object, indent: string, inline: boolean): void {
    let first = true;
    for (const [key, child] of entriesOf(value)) {
      this.text += `${inline && first ? "" : indent}${this.key(key)}:`;
      first = false;
      this.afterKey(child, indent);
    }
  }

  private afterKey(child: unknown, indent: string): void {
    if (Array.isArray(child)) {
      if (child.length === 0) this.text += " []\n";
      else {
        this.text += "\n";
        this.sequence(child, `${indent}  `);
      }
    } else if (isCollection(child)) {
      if (entriesOf(child).length === 0) this.text += " {}\n";
      else {
        this.text += "\n";
        this.mapping(child, `${indent}  `, false);
      }
    } else {
      this.text += ` ${this.scalar(child, this.values, (v) => new Map([["k", v]]), 3, indent)}\n`;
    }
  }

  /** Each item as `- item` at `indent`. */
  private sequence(items: readonly unknown[], indent: string): void {
    for (const item of items) {
      this.text += `${indent}- `;
      this.sequenceItem(item, `${indent}  `);
    }
  }

  private sequenceItem(item: unknown, indent: string): void {
    if (Array.isArray(item)) {
      if (item.length === 0) this.text += "[]\n";
      else {
        // A nested sequence starts on the outer dash's line: `- - a`.
        item.forEach((nested, i) => {
          this.text += i === 0 ? "- " : `${indent}- `;
          this.sequenceItem(nested, `${indent}  `);
        });
      }
    } else if (isCollection(item)) {
      if (entriesOf(item).length === 0) this.text += "{}\n";
      else this.mapping(item, indent, true);
    } else {
      this.text += `${this.scalar(item, this.items, (v) => [v], 2, indent.slice(2))}\n`;
    }
  }

  /**
   * The package's own form of a scalar after a key or dash at `base`. A block scalar (`|`) is
   * printed after a key or dash at column 0, so its lines are moved right by `base`.
   */
  private scalar(value: unknown, cache: Map<Plain, string>, wrap: (value: Plain) => unknown, prefix: number, base: string): string {
    if (typeof value === "string" ? isPlainWord(value) : Number.isSafeInteger(value)) return String(value);
    if (value !== null && typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") throw new NotBlockSafe();
    let text = cache.get(value);
    if (text === undefined) {
      const printed = stringify(wrap(value), YAML_OPTIONS);
      text = printed.slice(prefix, -1);
      if (text.includes("\n") && !/^\|[0-9+-]*\n/.test(text)) throw new NotBlockSafe();
      cache.set(value, text);
    }
    // Blank lines of a block scalar carry no indentation.
    return base === "" || !text.includes("\n") ? text : text.replace(/\n(?=[^\n])/g, `\n${base}`);
  }

  private key(key: string): string {
    if (isPlainWord(key)) return key;
    let text = this.keys.get(key);
    if (text === undefined) {
      const printed = stringify(new Map([[key, 0]]), YAML_OPTIONS);
      if (!printed.endsWith(": 0\n") || printed.startsWith("? ")) throw new NotBlockSafe();
      text = printed.slice(0, -4);
      if (text.includes("\n")) throw new NotBlockSafe();
      this.keys.set(key, text);
    }
    return text;
  }
}

/**
 * Strings any YAML printer leaves plain: a letter or underscore, then letters, digits and `_./:-`,
 * not ending in `:`, and no word a YAML 1.1 or 1.2 schema reads as a boolean or null. Anything
 * else is printed by the package.
 */
const PLAIN_WORD = /^[A-Za-z_](?:[A-Za-z0-9_./:-]*[A-Za-z0-9_./-])?$/;
const RESERVED_WORDS = new Set(
  ["true", "false", "null", "yes", "no", "on", "off", "y", "n"].flatMap((word) => [word, word.toUpperCase(), word[0]!.toUpperCase() + word.slice(1)]),
);

function isPlainWord(text: string): boolean {
  return PLAIN_WORD.test(text) && !RESERVED_WORDS.has(text);
}

/** An object's entries as the package prints them: undefined values left out. */
function entriesOf(value: object): [string, unknown][] {
  return Object.entries(value).filter(([, child]) => child !== undefined);
}
