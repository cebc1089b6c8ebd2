#!/usr/bin/env node
// Fails if an MCP field name is spelled in Rust code outside the vocabulary
// module (src/rust/core/src/wire.rs). Run by tools/lint.sh.
//
// The names: every property name of the official schemas in tests/schema
// with an uppercase letter, a leading underscore, a dot or a slash
// (`protocolVersion`, `_meta`, `io.modelcontextprotocol/clientInfo`): MCP's
// own spellings, used for nothing else. All-lowercase names (`name`, `type`,
// `text`) are also R's list names and JSON Schema's keywords, so they are not
// checked (wire.rs says the same).
//
// A name counts as spelled when it is a whole string literal ("isError") or a
// JSON key inside one (b",\"isError\":"). Messages that name a field for
// people ("protocolVersion must be a string") are allowed. Test code is not
// checked: `#[cfg(test)] mod tests { ... }` to the end of a file, and files
// declared as `#[cfg(test)] mod name;`.
//
// Usage: node tools/wire-names.mjs [root]   (root defaults to the repository)
import fs from "node:fs";
import path from "node:path";

const root = process.argv[2] ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const schemaDir = path.join(root, "tests", "schema");
const vocabulary = path.join(root, "src", "rust", "core", "src", "wire.rs");
const crates = ["core/src", "devtools/src", "src"].map((d) => path.join(root, "src", "rust", ...d.split("/")));

const names = new Set();
for (const version of fs.readdirSync(schemaDir)) {
  const file = path.join(schemaDir, version, "schema.json");
  if (!fs.existsSync(file)) continue;
  (function walk(node) {
    if (!node || typeof node !== "object") return;
    const props = node.properties;
    if (props && typeof props === "object" && !Array.isArray(props)) {
      for (const key of Object.keys(props)) names.add(key);
    }
    for (const value of Object.values(node)) walk(value);
  })(JSON.parse(fs.readFileSync(file, "utf8")));
}
const wireOnly = [...names].filter((n) => /[A-Z_./]/.test(n)).sort();
if (wireOnly.length === 0) {
  console.log(`names  no schemas found in ${schemaDir}`);
  process.exit(1);
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
// The name between quotes, each possibly escaped (\" inside a literal).
const spelled = new RegExp(`\\\\?"(${wireOnly.map(escape).join("|")})\\\\?"`, "g");

function rustFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? rustFiles(p) : e.name.endsWith(".rs") ? [p] : [];
  });
}

// Files that are test modules: `#[cfg(test)]` then `mod name;`.
function testOnlyFiles(files) {
  const out = new Set();
  for (const f of files) {
    const text = fs.readFileSync(f, "utf8");
    for (const m of text.matchAll(/#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+([a-z_0-9]+)\s*;/g)) {
      const dir = ["mod.rs", "lib.rs"].includes(path.basename(f)) ? path.dirname(f) : f.replace(/\.rs$/, "");
      out.add(path.join(dir, `${m[1]}.rs`));
      out.add(path.join(dir, m[1], "mod.rs"));
    }
  }
  return out;
}

const files = crates.flatMap(rustFiles);
const skip = testOnlyFiles(files);
const findings = [];
for (const file of files) {
  if (file === vocabulary || skip.has(file)) continue;
  let text = fs.readFileSync(file, "utf8");
  const tests = text.search(/#\[cfg\(test\)\]\s*mod\s+tests\s*\{/);
  if (tests >= 0) text = text.slice(0, tests);
  text.split("\n").forEach((line, i) => {
    if (/^\s*\/\//.test(line)) return; // comments may name fields
    for (const m of line.matchAll(spelled)) {
      findings.push(`${path.relative(root, file)}:${i + 1}: "${m[1]}" (use crate::wire)`);
    }
  });
}
if (findings.length) {
  console.log(`names  ${findings.length} MCP field names spelled outside src/rust/core/src/wire.rs`);
  for (const f of findings) console.log(`         ${f}`);
  process.exit(1);
}
console.log(`names  all crates: clean (${wireOnly.length} MCP field names, each spelled only in wire.rs)`);
