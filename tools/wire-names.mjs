#!/usr/bin/env node
// One place for each protocol spelling. Fails if, in the package's code (the
// R code of R/ and the Rust code of src/rust/{core,devtools,}/src):
// - an MCP field name is spelled outside the vocabulary module
//   (src/rust/core/src/wire.rs), or twice in it;
// - a protocol version that mcplite serves is spelled outside the version
//   table (src/rust/core/src/version.rs), or twice in it.
// R reads both from the core (R/protocol.R: protocol_versions(),
// wire_name()). Run by tools/lint.sh.
//
// The names: every property name of the official schemas in tests/schema
// with an uppercase letter, a leading underscore, a dot or a slash
// (`protocolVersion`, `_meta`, `io.modelcontextprotocol/clientInfo`): MCP's
// own spellings, used for nothing else. All-lowercase names (`name`, `type`,
// `text`) are also R's list names and JSON Schema's keywords, so they are not
// checked (wire.rs says the same). The versions: the `id`s of the table.
//
// A name or version counts as spelled when it is a whole string literal
// ("isError", "2025-11-25") or a JSON key or value inside one
// (b",\"isError\":"); in R also as a symbol (`res$isError`,
// `list(isError = TRUE)`, `` `_meta` ``, a variable of that name).
// Messages that name a field or a version for people ("protocolVersion must
// be a string", a specification cited by its version) are allowed, and so
// are comments (roxygen text included). Test code is not checked: the R tests live in tests/, and in
// Rust `#[cfg(test)] mod tests { ... }` to the end of a file, and files
// declared as `#[cfg(test)] mod name;`.
//
// Usage: node tools/wire-names.mjs [root]   (root defaults to the repository)
import fs from "node:fs";
import path from "node:path";

const root = process.argv[2] ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const schemaDir = path.join(root, "tests", "schema");
const vocabulary = path.join(root, "src", "rust", "core", "src", "wire.rs");
const versionTable = path.join(root, "src", "rust", "core", "src", "version.rs");
const crates = ["core/src", "devtools/src", "src"].map((d) => path.join(root, "src", "rust", ...d.split("/")));
const rDir = path.join(root, "R");

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

const findings = [];
const rel = (f) => path.relative(root, f);

// The one place of each: wire.rs's `ID = "name";` lines and version.rs's
// `id: "version",` lines, each spelling once.
function owned(file, pattern, what) {
  const seen = new Map();
  fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
    const m = line.match(pattern);
    if (!m) return;
    if (seen.has(m[1])) findings.push(`${rel(file)}:${i + 1}: ${what} "${m[1]}" is also on line ${seen.get(m[1])}`);
    else seen.set(m[1], i + 1);
  });
  return [...seen.keys()];
}
owned(vocabulary, /^\s*[A-Z][A-Z0-9_]*\s*=\s*"([^"]+)";/, "the name");
const versions = owned(versionTable, /^\s*id:\s*"([^"]+)",/, "the version");
if (versions.length === 0) {
  console.log(`names  no versions found in ${rel(versionTable)}`);
  process.exit(1);
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const alternatives = (xs) => xs.map(escape).join("|");
// The name between quotes, each possibly escaped (\" inside a literal).
const quoted = (xs) => new RegExp(`\\\\?"(${alternatives(xs)})\\\\?"`, "g");
const spelledName = quoted(wireOnly);
const spelledVersion = quoted(versions);

// ---- Rust -----------------------------------------------------------------

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
for (const file of files) {
  if (skip.has(file)) continue;
  let text = fs.readFileSync(file, "utf8");
  const tests = text.search(/#\[cfg\(test\)\]\s*mod\s+tests\s*\{/);
  if (tests >= 0) text = text.slice(0, tests);
  text.split("\n").forEach((line, i) => {
    if (/^\s*\/\//.test(line)) return; // comments may name fields and versions
    if (file !== vocabulary) {
      for (const m of line.matchAll(spelledName)) {
        findings.push(`${rel(file)}:${i + 1}: "${m[1]}" (use crate::wire)`);
      }
    }
    if (file !== versionTable) {
      for (const m of line.matchAll(spelledVersion)) {
        findings.push(`${rel(file)}:${i + 1}: "${m[1]}" (use crate::version::VERSIONS)`);
      }
    }
  });
}

// ---- R --------------------------------------------------------------------

// The tokens of R code that can spell a name: string literals (`value`, the
// text between the quotes as written) and symbols (backquoted or bare: a
// variable, an argument or element name, what follows `$`). Comments are
// skipped.
function rTokens(text) {
  const out = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  const ident = /[A-Za-z0-9._]/;
  while (i < n) {
    const c = text[i];
    if (c === "\n") {
      line++;
      i++;
    } else if (c === "#") {
      while (i < n && text[i] !== "\n") i++;
    } else if ((c === "r" || c === "R") && (text[i + 1] === '"' || text[i + 1] === "'") && !(i > 0 && ident.test(text[i - 1]))) {
      // Raw string: r"(...)", r"[...]", r"{...}", with optional dashes.
      const q = text[i + 1];
      let j = i + 2;
      let dashes = "";
      while (text[j] === "-") dashes += text[j++];
      const close = { "(": ")", "[": "]", "{": "}" }[text[j]];
      if (!close) {
        i++;
        continue;
      }
      const end = text.indexOf(close + dashes + q, j + 1);
      const stop = end < 0 ? n : end;
      const start = line;
      const value = text.slice(j + 1, stop);
      line += (value.match(/\n/g) || []).length;
      out.push({ kind: "string", value, line: start });
      i = stop + close.length + dashes.length + 1;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < n && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      const value = text.slice(i + 1, j);
      const start = line;
      line += (value.match(/\n/g) || []).length;
      if (c === "`") {
        out.push({ kind: "symbol", value, line: start });
      } else {
        out.push({ kind: "string", value, line: start });
      }
      i = j + 1;
    } else if (/[A-Za-z._]/.test(c) && !(i > 0 && ident.test(text[i - 1]))) {
      let j = i;
      while (j < n && ident.test(text[j])) j++;
      out.push({ kind: "symbol", value: text.slice(i, j), line });
      i = j;
    } else {
      i++;
    }
  }
  return out;
}

const nameSet = new Set(wireOnly);
const versionSet = new Set(versions);
const rFiles = fs.existsSync(rDir) ? fs.readdirSync(rDir).filter((f) => /\.[Rr]$/.test(f)).sort() : [];
for (const f of rFiles) {
  const file = path.join(rDir, f);
  for (const t of rTokens(fs.readFileSync(file, "utf8"))) {
    const hits = [];
    if (t.kind === "string") {
      if (nameSet.has(t.value)) hits.push([t.value, "wire_name()"]);
      else for (const m of t.value.matchAll(spelledName)) hits.push([m[1], "wire_name()"]);
      if (versionSet.has(t.value)) hits.push([t.value, "protocol_versions()"]);
      else for (const m of t.value.matchAll(spelledVersion)) hits.push([m[1], "protocol_versions()"]);
    } else if (nameSet.has(t.value)) {
      hits.push([t.value, "wire_name()"]);
    }
    for (const [what, use] of hits) findings.push(`${rel(file)}:${t.line}: "${what}" (use ${use})`);
  }
}

if (findings.length) {
  console.log(`names  ${findings.length} MCP field names or protocol versions spelled outside their one place (src/rust/core/src/wire.rs, src/rust/core/src/version.rs)`);
  for (const f of findings) console.log(`         ${f}`);
  process.exit(1);
}
console.log(
  `names  R and all crates: clean (${wireOnly.length} MCP field names, each spelled only in wire.rs; ` +
    `${versions.length} protocol versions, each only in version.rs)`,
);
