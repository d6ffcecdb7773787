/**
 * The documentation points only at things in this repository: no section references into design
 * notes that do not ship (the contract and the Envoy facts users need are in docs/), and every
 * relative link in the Markdown files resolves to a file and, with `#`, to a heading in it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { REPO_ROOT } from "./support/fixtures.js";

const MARKDOWN = ["README.md", "CHANGELOG.md", "SECURITY.md", "bench/README.md", ...readdirSync(join(REPO_ROOT, "docs")).map((file) => `docs/${file}`)];
const CODE_DIRS = ["src", "test", "bench", "examples", "scripts"];

function filesUnder(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)));
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");
}

function anchorsIn(file: string): Set<string> {
  return new Set([...readFileSync(join(REPO_ROOT, file), "utf8").matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

/** Each relative link of a Markdown file that does not resolve, as `<file>: <link>`. */
function brokenLinks(file: string, markdown = readFileSync(join(REPO_ROOT, file), "utf8")): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((link) => !/^[a-z]+:/.test(link))
    .filter((link) => {
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? file : relative(REPO_ROOT, join(REPO_ROOT, dirname(file), path));
      if (!existsSync(join(REPO_ROOT, target))) return true;
      return anchor !== undefined && target.endsWith(".md") && !anchorsIn(target).has(anchor);
    })
    .map((link) => `${file}: ${link}`);
}

describe("documentation", () => {
  test("no file refers to sections of design notes outside the repository", () => {
    const files = [...MARKDOWN, ...CODE_DIRS.flatMap(filesUnder)];
    const stale = files.filter((file) => /(DESIGN|ENVOY-FACTS)(\.md)? ?§|shared\/(DESIGN|ENVOY-FACTS)/.test(readFileSync(join(REPO_ROOT, file), "utf8")));
    expect(stale).toEqual([]);
  });

  test.each(MARKDOWN)("every relative link in %s resolves", (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  test("a broken file link and a broken anchor are both caught", () => {
    const links = "[a](envoy.md#versions) [b](#shape) [c](envoy.md#no-such-heading) [d](missing.md) [e](https://example.com/x.md)";
    expect(brokenLinks("docs/contract.md", links)).toEqual(["docs/contract.md: envoy.md#no-such-heading", "docs/contract.md: missing.md"]);
    expect(anchorOf("Source identity: per-mode requirements")).toBe("source-identity-per-mode-requirements");
  });
});
