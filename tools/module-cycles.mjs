#!/usr/bin/env node
// The modules of each Rust crate import each other in no circle. For every
// crate (src/rust/core/src, src/rust/devtools/src, src/rust/src), reads each
// file's references to other modules of its crate (`crate::a::b`, `super::x`,
// and a parent's `child::x` for its declared `mod child;`), prints the
// imports of each module with --list, and fails on a circle (a strongly
// connected group of two or more modules). A re-export (`pub use child::x`)
// is not an import: it names a child's item in the parent's namespace, and
// the parent's own code does not use it. Test code is left out: a
// `#[cfg(test)] mod tests { ... }` to the end of a file, and files declared
// as `#[cfg(test)] mod name;`. Run by tools/lint.sh.
//
// Usage: node tools/module-cycles.mjs [--list] [root]
import fs from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
const list = args.includes("--list");
const root = args.find((a) => !a.startsWith("--")) ??
  path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const crates = { "mcplite-core": "src/rust/core/src", "mcplite-devtools": "src/rust/devtools/src", mcplite: "src/rust/src" };

// A file's module path: lib.rs -> "", a/mod.rs -> "a", a/b.rs -> "a::b".
function moduleOf(rel) {
  const parts = rel.replace(/\.rs$/, "").split(path.sep);
  if (parts[parts.length - 1] === "mod" || parts[parts.length - 1] === "lib") parts.pop();
  return parts.join("::");
}

// Non-test code of a file: comments removed, and from a `#[cfg(test)]`
// module to the end.
function code(text) {
  const cut = text.search(/#\[cfg\(test\)\]\s*mod\s+\w+\s*\{/);
  if (cut >= 0) text = text.slice(0, cut);
  return text.replace(/\/\/.*$/gm, "").replace(/^\s*pub(?:\([^)]*\))?\s+use\s[^;]*;/gm, "");
}

let failed = false;
for (const [crate, dir] of Object.entries(crates)) {
  const base = path.join(root, dir);
  const files = fs.readdirSync(base, { recursive: true }).filter((f) => f.endsWith(".rs"));
  const mods = new Map(files.map((f) => [moduleOf(f), f]));
  // Files that are test modules of their parent.
  const testMods = new Set();
  for (const f of files) {
    const m = moduleOf(f);
    for (const t of fs.readFileSync(path.join(base, f), "utf8").matchAll(/#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/g)) {
      testMods.add(m ? `${m}::${t[1]}` : t[1]);
    }
  }
  const resolve = (segments) => {
    for (let n = segments.length; n > 0; n--) {
      const m = segments.slice(0, n).join("::");
      if (mods.has(m)) return m;
    }
    return null;
  };
  const edges = new Map();
  for (const f of files) {
    const from = moduleOf(f);
    if (testMods.has(from)) continue;
    const text = code(fs.readFileSync(path.join(base, f), "utf8"));
    const to = new Set();
    for (const r of text.matchAll(/\bcrate((?:::\w+)+)/g)) to.add(resolve(r[1].slice(2).split("::")));
    const parent = from.split("::").slice(0, -1);
    for (const r of text.matchAll(/\bsuper((?:::\w+)+)/g)) to.add(resolve([...parent, ...r[1].slice(2).split("::")]) ?? parent.join("::"));
    // A use list `use super::{a, b}` names items of the parent.
    if (/\bsuper::\{/.test(text)) to.add(parent.join("::"));
    const children = [...text.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm)].map((c) => c[1]);
    for (const c of children) {
      const child = from ? `${from}::${c}` : c;
      if (from === "" || testMods.has(child)) continue; // the crate root may use every module
      for (const r of text.matchAll(new RegExp(`(?<![\\w:])${c}((?:::\\w+)+)`, "g"))) {
        to.add(resolve([...from.split("::"), c, ...r[1].slice(2).split("::")]));
      }
    }
    to.delete(null);
    to.delete(from);
    if (from !== "") to.delete(""); // items of the crate root (lib.rs): the root imports everything anyway
    edges.set(from, [...to].filter((m) => !testMods.has(m)).sort());
  }
  if (list) {
    console.log(`${crate}:`);
    for (const [m, to] of [...edges].sort()) if (to.length) console.log(`  ${m || "(root)"} -> ${to.map((t) => t || "(root)").join(", ")}`);
  }
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), circles = [];
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const group = [];
      let w;
      do { w = stack.pop(); on.delete(w); group.push(w); } while (w !== v);
      if (group.length > 1) circles.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  if (circles.length) {
    failed = true;
    for (const c of circles) {
      console.log(`cycles ${crate}: modules that import each other: ${c.map((m) => mods.get(m)).join(", ")}`);
      for (const m of c) console.log(`         ${mods.get(m)} -> ${edges.get(m).filter((t) => c.includes(t)).map((t) => mods.get(t)).join(", ")}`);
    }
  }
}
if (!failed) console.log(`cycles three crates: clean (no modules that import each other)`);
process.exit(failed ? 1 : 0);
