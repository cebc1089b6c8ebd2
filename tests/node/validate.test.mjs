// The validator itself: it must accept the wire examples of protocol README
// section 10 and reject their broken variants (tests/testthat/fixtures/wire-examples.json,
// shared with tests/testthat/test-harness.R), and keep answering line by line.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createValidator } from "./validate.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const examples = JSON.parse(readFileSync(join(here, "..", "testthat", "fixtures", "wire-examples.json"), "utf8"));
const v = createValidator();

for (const ex of examples) {
  test(`validator ${ex.valid ? "accepts" : "rejects"}: ${ex.name}`, () => {
    const r = v.validate(ex);
    assert.equal(r.ok, ex.valid, JSON.stringify(r));
    if (!ex.valid) assert.ok(r.errors.length > 0);
  });
}

test("validator CLI answers one line per input line, in order, and survives bad input", async () => {
  const child = spawn(process.execPath, [join(here, "validate.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const lines = [
    JSON.stringify({ tag: 1, ...examples.find((e) => e.valid) }),
    "this is not json",
    "",
    JSON.stringify({ tag: 3, ...examples.find((e) => !e.valid) }),
    JSON.stringify({ tag: 4, version: "1999-01-01", message: {} }),
  ];
  child.stdin.end(lines.join("\n") + "\n");
  const code = await new Promise((res) => child.on("close", res));
  assert.equal(code, 0);
  const got = out.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(got.length, 4);
  assert.deepEqual(got.map((g) => g.ok), [true, false, false, false]);
  assert.deepEqual(got.map((g) => g.tag), [1, undefined, 3, 4]);
  assert.match(got[1].errors[0], /validator input/);
  assert.match(got[3].errors[0], /unknown version/);
});

test("validator picks the envelope from the message when no def is given", () => {
  const ok = v.validate({ version: "2025-11-25", message: { jsonrpc: "2.0", id: "x", result: {} } });
  assert.deepEqual(ok.checked, ["JSONRPCResultResponse"]);
  const err = v.validate({ version: "2024-11-05", message: { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "m" } } });
  assert.deepEqual(err.checked, ["JSONRPCError"]);
});
