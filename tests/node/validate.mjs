#!/usr/bin/env node
// Validates MCP server responses against the official JSON Schema of one
// protocol version. Long-running: one JSON request per stdin line, one JSON
// verdict per stdout line, in order. See README.md in this folder for the
// line format. Also importable: `import { createValidator } from "./validate.mjs"`.

import { readFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));

export const VERSIONS = ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"];
const LEGACY_ENVELOPE = new Set(["2024-11-05", "2025-06-18"]);

// Envelope names differ between the draft-07 and the 2020-12 schema files;
// accept either spelling for every version.
const ALIASES = {
  "2024-11-05": { JSONRPCResultResponse: "JSONRPCResponse", JSONRPCErrorResponse: "JSONRPCError" },
  "2025-06-18": { JSONRPCResultResponse: "JSONRPCResponse", JSONRPCErrorResponse: "JSONRPCError" },
  "2025-11-25": { JSONRPCError: "JSONRPCErrorResponse" },
  "2026-07-28": { JSONRPCError: "JSONRPCErrorResponse" },
};

// Codes whose replies may lack an id because the request id could not be read
// (protocol README 1.6 rows 2-4 and 7, 1.7).
const UNREADABLE_ID_CODES = new Set([-32700, -32600]);

/**
 * Directory holding <version>/schema.json: MCPLITE_SCHEMA_DIR, else the copies
 * of the official schemas in this repository (tests/schema, see its README).
 */
export function schemaDir() {
  if (process.env.MCPLITE_SCHEMA_DIR) return resolve(process.env.MCPLITE_SCHEMA_DIR);
  return resolve(here, "..", "schema");
}

export function createValidator(dir = schemaDir()) {
  const ajvs = new Map(); // version -> { ajv, key, root, defs }
  const compiled = new Map();

  function load(version) {
    if (ajvs.has(version)) return ajvs.get(version);
    const file = join(dir, version, "schema.json");
    if (!existsSync(file)) throw new Error(`no schema for version ${version} at ${file}`);
    const schema = JSON.parse(readFileSync(file, "utf8"));
    const modern = "$defs" in schema;
    const AjvClass = modern ? Ajv2020 : Ajv;
    // The schemas use `format` only as annotations and carry doc-only keywords.
    const ajv = new AjvClass({ strict: false, allErrors: true, validateFormats: false });
    const key = `mcp-${version}`;
    ajv.addSchema(schema, key);
    const entry = { ajv, key, root: modern ? "$defs" : "definitions", defs: modern ? schema.$defs : schema.definitions };
    ajvs.set(version, entry);
    return entry;
  }

  function defName(version, name) {
    return (ALIASES[version] && ALIASES[version][name]) || name;
  }

  function getValidator(version, pointer) {
    const id = `${version}|${pointer}`;
    if (!compiled.has(id)) {
      const { ajv, key } = load(version);
      const fn = ajv.getSchema(`${key}#${pointer}`);
      if (!fn) throw new Error(`schema ${version} has no ${pointer}`);
      compiled.set(id, fn);
    }
    return compiled.get(id);
  }

  function check(version, name, value, where, errors) {
    const { root, defs } = load(version);
    const real = defName(version, name);
    if (!(real in defs)) {
      errors.push(`unknown definition ${name} in schema ${version}`);
      return;
    }
    const fn = getValidator(version, `/${root}/${real}`);
    if (!fn(value)) addAjvErrors(errors, real, where, fn.errors);
  }

  function addAjvErrors(errors, label, where, list) {
    for (const e of (list || []).slice(0, 25)) {
      errors.push(`${label}: ${where}${e.instancePath || ""} ${e.message}${e.params && Object.keys(e.params).length ? " " + JSON.stringify(e.params) : ""}`);
    }
    if (list && list.length > 25) errors.push(`${label}: ... ${list.length - 25} more errors`);
  }

  // Classify a definition: "message" (a whole JSON-RPC message), "error"
  // (an error object: code/message), or "result" (a result body).
  function kindOf(version, name) {
    const { defs } = load(version);
    const real = defName(version, name);
    const d = defs[real];
    if (!d) return "unknown";
    if (real.startsWith("JSONRPC")) return "message";
    const props = d.properties || {};
    if ("jsonrpc" in props || "error" in props) return "message";
    if ("code" in props && "message" in props) return "error";
    return "result";
  }

  /**
   * Validate one response message.
   * @param {object} req { version, message, def?, strict? }
   * @returns {{ok: boolean, errors?: string[], checked: string[]}}
   */
  function validate(req) {
    const errors = [];
    const checked = [];
    const { version, message, def } = req || {};
    if (!VERSIONS.includes(version) && !(typeof version === "string" && existsSync(join(dir, version, "schema.json")))) {
      return { ok: false, errors: [`unknown version ${JSON.stringify(version)}`], checked };
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      return { ok: false, errors: ["message is not a JSON object"], checked };
    }
    if ("method" in message) return validateSent(version, message, def);
    const hasResult = "result" in message;
    const hasError = "error" in message;
    if (hasResult === hasError) {
      errors.push(hasResult ? "message has both result and error" : "message has neither result nor error");
    }
    const kind = def ? kindOf(version, def) : null;
    if (kind === "unknown") {
      return { ok: false, errors: [`unknown definition ${def} in schema ${version}`], checked };
    }

    if (kind === "message") {
      if (hasError && !("id" in message) && LEGACY_ENVELOPE.has(version) && defName(version, def) === "JSONRPCError") {
        checkIdlessLegacyError(version, message, errors, checked);
      } else {
        check(version, def, message, "", errors);
        checked.push(defName(version, def));
      }
    } else {
      // Envelope picked from the message itself.
      if (hasError) {
        if (!("id" in message) && LEGACY_ENVELOPE.has(version)) {
          checkIdlessLegacyError(version, message, errors, checked);
        } else {
          const env = LEGACY_ENVELOPE.has(version) ? "JSONRPCError" : "JSONRPCErrorResponse";
          check(version, env, message, "", errors);
          checked.push(env);
        }
        if (kind === "result") errors.push(`expected a ${def} result, got error ${JSON.stringify(message.error)}`);
        if (kind === "error") {
          check(version, def, message.error, "/error", errors);
          checked.push(defName(version, def));
        }
      } else {
        const env = LEGACY_ENVELOPE.has(version) ? "JSONRPCResponse" : "JSONRPCResultResponse";
        check(version, env, message, "", errors);
        checked.push(env);
        if (kind === "error") errors.push(`expected a ${def} error, got a result`);
        if (kind === "result" && hasResult) {
          check(version, def, message.result, "/result", errors);
          checked.push(defName(version, def));
          if (req.strict) strictCheck(version, defName(version, def), message.result, errors);
        }
      }
    }
    if (hasError && "id" in message && message.id === null) {
      errors.push("error id is null; mcplite omits id when the request id is unreadable");
    }
    // Only an unreadable request id justifies leaving the id out (README 1.2, 1.7).
    if (hasError && !("id" in message) && !LEGACY_ENVELOPE.has(version) &&
        !UNREADABLE_ID_CODES.has(message.error && message.error.code)) {
      errors.push(`only -32700/-32600 errors may omit id, got ${JSON.stringify(message.error && message.error.code)}`);
    }
    return errors.length ? { ok: false, errors, checked } : { ok: true, checked };
  }

  // A request or a notification (what a client sends; a server's
  // notifications): its envelope, then the named definition, if any, against
  // the whole message (CallToolRequest, InitializedNotification, ...).
  function validateSent(version, message, def) {
    const errors = [];
    const checked = [];
    const env = "id" in message ? "JSONRPCRequest" : "JSONRPCNotification";
    check(version, env, message, "", errors);
    checked.push(env);
    if (def) {
      check(version, def, message, "", errors);
      checked.push(defName(version, def));
      if (message.method !== (load(version).defs[defName(version, def)]?.properties?.method?.const ?? message.method)) {
        errors.push(`${def} has method ${JSON.stringify(message.method)}`);
      }
    }
    return errors.length ? { ok: false, errors, checked } : { ok: true, checked };
  }

  // 24-11 / 25-06 require `id` on errors; mcplite omits it when the request id
  // was unreadable (README 1.7). Accept exactly that shape: {jsonrpc, error}
  // with a parse/invalid-request code, and validate the error object alone.
  function checkIdlessLegacyError(version, message, errors, checked) {
    const keys = Object.keys(message).sort().join(",");
    if (keys !== "error,jsonrpc") errors.push(`id-less error must have exactly jsonrpc and error, has ${keys}`);
    if (message.jsonrpc !== "2.0") errors.push(`jsonrpc must be "2.0"`);
    const code = message.error && message.error.code;
    if (!UNREADABLE_ID_CODES.has(code)) {
      errors.push(`only -32700/-32600 errors may omit id, got ${JSON.stringify(code)}`);
    }
    const { root } = load(version);
    const fn = getValidator(version, `/${root}/JSONRPCError/properties/error`);
    if (!fn(message.error)) addAjvErrors(errors, "JSONRPCError.error", "/error", fn.errors);
    checked.push("JSONRPCError.error (id-less)");
  }

  // ---- strict mode: the schemas are open, so newer fields leaking into an
  // older version pass validation. Compare member names with the properties
  // the version's own schema declares (README 6, 9).
  function propsOf(version, node, seen = new Set()) {
    const { defs } = load(version);
    const out = new Set();
    if (!node || typeof node !== "object") return out;
    if (node.$ref) {
      const name = node.$ref.split("/").pop();
      if (!seen.has(name) && defs[name]) {
        seen.add(name);
        for (const p of propsOf(version, defs[name], seen)) out.add(p);
      }
    }
    for (const p of Object.keys(node.properties || {})) out.add(p);
    for (const sub of node.allOf || []) for (const p of propsOf(version, sub, seen)) out.add(p);
    return out;
  }

  function defProps(version, name) {
    const { defs } = load(version);
    return propsOf(version, defs[name]);
  }

  function extra(obj, allowed, where, errors) {
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) return;
    for (const k of Object.keys(obj)) {
      if (!allowed.has(k)) errors.push(`strict: ${where}/${k} is not defined in ${errors.version}`);
    }
  }

  // Annotations may carry members MCP does not define (authors' own, sent as
  // given, as CRAN mcplite does); only MCP's own names that this version
  // lacks count as leaks.
  function leaked(obj, allowed, mcpNames, where, errors) {
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) return;
    for (const k of Object.keys(obj)) {
      if (!allowed.has(k) && mcpNames.has(k)) errors.push(`strict: ${where}/${k} is not defined in ${errors.version}`);
    }
  }

  function everyVersion(f) {
    const out = new Set();
    for (const v of VERSIONS) for (const p of f(v)) out.add(p);
    return out;
  }

  function subProps(version, defName_, prop) {
    const { defs } = load(version);
    const node = defs[defName_] && defs[defName_].properties && defs[defName_].properties[prop];
    return propsOf(version, node);
  }

  const BLOCK_DEFS = {
    text: "TextContent", image: "ImageContent", audio: "AudioContent",
    resource_link: "ResourceLink", resource: "EmbeddedResource",
  };

  function strictContent(version, blocks, where, errors) {
    const { defs } = load(version);
    (Array.isArray(blocks) ? blocks : []).forEach((b, i) => {
      const w = `${where}/${i}`;
      const dn = b && BLOCK_DEFS[b.type];
      if (!dn || !defs[dn]) {
        errors.push(`strict: ${w} has content type ${JSON.stringify(b && b.type)} unknown in ${version}`);
        return;
      }
      extra(b, defProps(version, dn), w, errors);
      if (b.annotations) {
        const mcp = everyVersion((v) => (load(v).defs[dn] ? subProps(v, dn, "annotations") : new Set()));
        leaked(b.annotations, subProps(version, dn, "annotations"), mcp, `${w}/annotations`, errors);
      }
      if (b.type === "resource" && b.resource) {
        const rd = "text" in b.resource ? "TextResourceContents" : "BlobResourceContents";
        extra(b.resource, defProps(version, rd), `${w}/resource`, errors);
      }
    });
  }

  function strictCheck(version, name, result, errors) {
    errors.version = version;
    if (!result || typeof result !== "object") return;
    extra(result, defProps(version, name), "/result", errors);
    if (name === "ListToolsResult") {
      (result.tools || []).forEach((t, i) => {
        const w = `/result/tools/${i}`;
        extra(t, defProps(version, "Tool"), w, errors);
        if (t && t.annotations) {
          const mcp = everyVersion((v) => (load(v).defs.ToolAnnotations ? defProps(v, "ToolAnnotations") : new Set()));
          leaked(t.annotations, defProps(version, "ToolAnnotations"), mcp, `${w}/annotations`, errors);
        }
      });
    } else if (name === "CallToolResult") {
      strictContent(version, result.content, "/result/content", errors);
    } else if (name === "InitializeResult") {
      if (result.serverInfo) extra(result.serverInfo, defProps(version, "Implementation"), "/result/serverInfo", errors);
    }
  }

  return { validate, schemaDir: dir };
}

// The lines of standard input, split at "\n" only: node 24's readline also
// ends a line at U+2028 and U+2029, which JSON allows raw inside strings.
async function* stdinLines() {
  const decoder = new TextDecoder("utf-8");
  let rest = "";
  for await (const chunk of process.stdin) {
    rest += decoder.decode(chunk, { stream: true });
    let at;
    while ((at = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, at).replace(/\r$/, "");
      rest = rest.slice(at + 1);
    }
  }
  rest += decoder.decode();
  if (rest) yield rest;
}

async function main() {
  const v = createValidator();
  for await (const line of stdinLines()) {
    if (!line.trim()) continue;
    let out;
    try {
      const req = JSON.parse(line);
      out = v.validate(req);
      if (req && req.tag !== undefined) out.tag = req.tag;
    } catch (e) {
      out = { ok: false, errors: [`validator input: ${e.message}`] };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`validate.mjs: ${e.stack || e}\n`);
    process.exit(1);
  });
}
