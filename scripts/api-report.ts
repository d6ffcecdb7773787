/**
 * The API report: every name each entry point of package.json's `exports` map makes public, with
 * its kind and shape (signatures, members, values), one file per entry point under api/. The
 * report is committed and `test/api-report.test.ts` compares it with the code, so the public
 * surface changes only on purpose: a change shows up as a diff of api/ in review.
 * `npm run api:report` rewrites it. Generated Envoy types are listed by name and kind only; their
 * fields are reviewed in gen/.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** One entry point: its import specifier and the source file that defines it. */
export interface EntryPoint {
  readonly specifier: string;
  readonly source: string;
}

export interface ApiReport {
  /** Report text by file name under api/. */
  readonly files: ReadonlyMap<string, string>;
  /** The public names of each entry point, sorted, by import specifier. */
  readonly names: ReadonlyMap<string, readonly string[]>;
  /** `"<specifier>: <name>"` for each public name without a doc comment. */
  readonly undocumented: readonly string[];
}

const REPO_ROOT = fileURLToPath(new URL("../", import.meta.url));
const REPORT_DIR = join(REPO_ROOT, "api");

const TYPE_FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;

/** The entry points package.json exports, each mapped from its built file back to its source. */
export function entryPoints(): EntryPoint[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { name: string; exports: Record<string, string | { default: string }> };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) =>
    typeof target === "string"
      ? [] // a data file, such as the mesh file's JSON Schema
      : [
          {
            specifier: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
            source: target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"),
          },
        ],
  );
}

/** The report file of an entry point: `aether-xds/naming` → `naming.md`, the root → `index.md`. */
function reportFileName(entry: EntryPoint): string {
  const slash = entry.specifier.indexOf("/");
  return `${slash < 0 ? "index" : entry.specifier.slice(slash + 1)}.md`;
}

export function apiReport(): ApiReport {
  const entries = entryPoints();
  const program = createProgram(entries);
  const checker = program.getTypeChecker();
  const files = new Map<string, string>();
  const names = new Map<string, string[]>();
  const undocumented: string[] = [];
  for (const entry of entries) {
    const source = program.getSourceFile(join(REPO_ROOT, entry.source));
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${entry.specifier}: no module at ${entry.source}`);
    const exported = checker.getExportsOfModule(moduleSymbol).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const sections = exported.map((symbol) => describe(program, symbol));
    undocumented.push(...exported.filter((symbol) => !hasDoc(checker, symbol)).map((symbol) => `${entry.specifier}: ${symbol.name}`));
    names.set(
      entry.specifier,
      exported.map((symbol) => symbol.name),
    );
    files.set(reportFileName(entry), `# ${entry.specifier}\n\n${entry.source}: ${exported.length} names.\n\n\`\`\`ts\n${sections.join("\n")}\n\`\`\`\n`);
  }
  return { files, names, undocumented };
}

/** The entry points' modules and everything they import, with the project's compiler options. */
function createProgram(entries: readonly EntryPoint[]): ts.Program {
  const config = ts.readConfigFile(join(REPO_ROOT, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT);
  return ts.createProgram(
    entries.map((entry) => join(REPO_ROOT, entry.source)),
    parsed.options,
  );
}

/** The declaration an export names, through re-exports. */
function resolved(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/**
 * A doc comment on the export itself (`export { /** … *\/ X }`) or on the declaration it names. A
 * file's opening comment is its header, not the doc of the declaration that happens to follow it.
 */
function hasDoc(checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  const declarations = [...(symbol.declarations ?? []), ...(resolved(checker, symbol).declarations ?? [])];
  return declarations.some((declaration) => ts.getJSDocCommentsAndTags(declaration).some((doc) => ts.isJSDoc(doc) && doc.pos > 0 && !!doc.comment));
}

/** One name: a line per declaration kind (a generated message is an interface and a const). */
function describe(program: ts.Program, exported: ts.Symbol): string {
  const checker = program.getTypeChecker();
  const symbol = resolved(checker, exported);
  const name = exported.name;
  const generated = (symbol.declarations ?? []).every((d) => relative(REPO_ROOT, d.getSourceFile().fileName).startsWith("gen/"));
  const lines: string[] = [];
  const flags = isTypeOnlyExport(exported) ? symbol.flags & ~ts.SymbolFlags.Value : symbol.flags;
  if (flags & ts.SymbolFlags.Class) lines.push(`class ${name}${generated ? "" : members(program, checker.getDeclaredTypeOfSymbol(symbol))}`);
  if (flags & ts.SymbolFlags.Interface) lines.push(`interface ${name}${generated ? "" : members(program, checker.getDeclaredTypeOfSymbol(symbol))}`);
  if (flags & ts.SymbolFlags.TypeAlias)
    lines.push(`type ${name} = ${checker.typeToString(checker.getDeclaredTypeOfSymbol(symbol), undefined, TYPE_FORMAT | ts.TypeFormatFlags.InTypeAlias)}`);
  if (flags & ts.SymbolFlags.Enum) lines.push(`enum ${name} { ${enumMembers(checker, symbol)} }`);
  if (flags & ts.SymbolFlags.Function) lines.push(...signatures(checker, symbol).map((signature) => `function ${name}${signature}`));
  if (flags & ts.SymbolFlags.Variable && !generated) lines.push(`const ${name}: ${checker.typeToString(valueType(checker, symbol), undefined, TYPE_FORMAT)}`);
  if (flags & ts.SymbolFlags.Variable && generated) lines.push(`const ${name}`);
  if (lines.length === 0) throw new Error(`${name}: an export of an unexpected kind`);
  return lines.join("\n");
}

/** `export { type X }` or `export type { X }`: only X's type meaning is public, not its value. */
function isTypeOnlyExport(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some((d) => ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly));
}

function valueType(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Type {
  return checker.getTypeOfSymbolAtLocation(symbol, symbol.valueDeclaration!);
}

/**
 * Each overload as written: parameter and return types as the source spells them. An overloaded
 * function's implementation signature is left out: callers cannot call it (nor does the .d.ts
 * carry it).
 */
function signatures(checker: ts.TypeChecker, symbol: ts.Symbol): string[] {
  const declarations = (symbol.declarations ?? []).filter(ts.isFunctionDeclaration);
  const callable = declarations.length > 1 ? declarations.filter((declaration) => declaration.body === undefined) : declarations;
  return callable.map((declaration) => {
    const typeParameters = declaration.typeParameters ? `<${declaration.typeParameters.map((p) => p.getText()).join(", ")}>` : "";
    const parameters = declaration.parameters.map((p) => `${p.name.getText()}${p.questionToken || p.initializer ? "?" : ""}: ${typeText(checker, p)}`);
    const returns =
      declaration.type?.getText() ?? checker.typeToString(checker.getSignatureFromDeclaration(declaration)!.getReturnType(), undefined, TYPE_FORMAT);
    return `${typeParameters}(${parameters.join(", ")}): ${returns}`;
  });
}

/** The type of a parameter or property as written, or as inferred when it is not written. */
function typeText(checker: ts.TypeChecker, node: ts.ParameterDeclaration | ts.PropertySignature | ts.PropertyDeclaration): string {
  return node.type?.getText() ?? checker.typeToString(checker.getTypeAtLocation(node), undefined, TYPE_FORMAT);
}

function enumMembers(checker: ts.TypeChecker, symbol: ts.Symbol): string {
  const values = [...(symbol.exports?.values() ?? [])].map(
    (member) => `${member.name} = ${JSON.stringify(checker.getConstantValue(member.valueDeclaration as ts.EnumMember))}`,
  );
  return values.join(", ");
}

/**
 * Properties and methods, one per line, without those a class inherits from the standard library
 * and without a class's private (`#name`) members, which are no part of its surface.
 */
function members(program: ts.Program, type: ts.Type): string {
  const checker = program.getTypeChecker();
  const own = checker
    .getPropertiesOfType(type)
    .filter((property) => !(property.declarations ?? []).every((d) => program.isSourceFileDefaultLibrary(d.getSourceFile())))
    .filter((property) => !(property.declarations ?? []).some((d) => ts.isPrivateIdentifier((d as ts.NamedDeclaration).name ?? d)));
  if (own.length === 0) return " {}";
  const lines = own.map((property) => {
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    const optional = property.flags & ts.SymbolFlags.Optional ? "?" : "";
    const readonly = declaration && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly ? "readonly " : "";
    const written = declaration && (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) ? typeText(checker, declaration) : undefined;
    const type = written ?? checker.typeToString(checker.getTypeOfSymbol(property), undefined, TYPE_FORMAT);
    return `  ${readonly}${checker.symbolToString(property)}${optional}: ${type};`;
  });
  return ` {\n${lines.join("\n")}\n}`;
}

/** Rewrites api/ from the code. */
function writeApiReport(): ApiReport {
  const report = apiReport();
  rmSync(REPORT_DIR, { recursive: true, force: true });
  mkdirSync(REPORT_DIR);
  for (const [name, text] of report.files) writeFileSync(join(REPORT_DIR, name), text);
  return report;
}

/** The committed report, by file name. */
export function committedApiReport(): Map<string, string> {
  return new Map(readdirSync(REPORT_DIR).map((name) => [name, readFileSync(join(REPORT_DIR, name), "utf8")]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = writeApiReport();
  for (const [specifier, names] of report.names) console.log(`${specifier}: ${names.length} names`);
  if (report.undocumented.length > 0) console.log(`without a doc comment:\n  ${report.undocumented.join("\n  ")}`);
}
