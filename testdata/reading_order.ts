/**
 * The reading order of a module in sections (a `// ---` rule, a `// Title`
 * line, a `// ---` rule): each section may use only what it and the
 * sections before it define. Names are resolved by the TypeScript compiler's
 * own binder (the version Deno 2.9.6 bundles), so a local that shadows a
 * top-level name is not taken for it, and type-only uses count too.
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test.
 *
 * @module
 */

import ts from "npm:typescript@6.0.3";

/** A section: its title and the line (1-based) of its first rule. */
export interface Section {
  title: string;
  line: number;
}

/** The sections of a module's text; what comes before the first is "(head)". */
export function sectionsOf(text: string): Section[] {
  const lines = text.split("\n");
  const sections = [{ title: "(head)", line: 1 }];
  for (let i = 2; i < lines.length; i++) {
    if (
      lines[i - 2].startsWith("// ---") && /^\/\/ [^-]/.test(lines[i - 1]) &&
      lines[i].startsWith("// ---")
    ) {
      sections.push({ title: lines[i - 1].slice(3), line: i - 1 });
    }
  }
  return sections;
}

/** Each section's title and length in lines, its banner included. */
export function sectionLengths(text: string): [string, number][] {
  const sections = sectionsOf(text);
  const end = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  return sections.map(({ title, line }, index) => [
    title,
    (sections[index + 1]?.line ?? end + 1) - line,
  ]);
}

/**
 * Each use of a top-level name in a section before the one that defines it,
 * as `line N: NAME in "USED IN" is defined in "DEFINED IN"`; none when the
 * module reads in order.
 */
export function forwardUses(path: string): string[] {
  const options = { noResolve: true, noLib: true, noEmit: true };
  const program = ts.createProgram([path], options);
  const source = program.getSourceFile(path);
  if (!source) throw new Error(`cannot read ${path}`);
  const checker = program.getTypeChecker();
  const sections = sectionsOf(source.getFullText());
  const lineOf = (node: ts.Node) =>
    source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const sectionAt = (line: number) =>
    sections.findLastIndex((section) => section.line <= line);
  const topLevel = (node: ts.Node) => {
    let at = node;
    while (at.parent && at.parent !== source) at = at.parent;
    return at.parent === source ? at : undefined;
  };
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node)) {
      const declaration = checker.getSymbolAtLocation(node)?.declarations?.[0];
      const statement = declaration?.getSourceFile() === source
        ? topLevel(declaration)
        : undefined;
      if (statement && !ts.isImportDeclaration(statement)) {
        const used = sectionAt(lineOf(node));
        const defined = sectionAt(lineOf(statement));
        if (defined > used) {
          found.push(
            `line ${lineOf(node)}: ${node.text} in "${
              sections[used].title
            }" is defined in "${sections[defined].title}"`,
          );
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
