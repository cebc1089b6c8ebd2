// A scripted stand-in for the Anthropic Messages API on 127.0.0.1, so Claude
// Code can be driven through a whole tool call without an account: while the
// conversation holds no tool result and the request offers the tool <tool>,
// the "model" asks for it with the JSON arguments <input>; once a tool result
// is in the conversation it answers with a text quoting that result. Any other
// request gets a short text. Each request is recorded as a JSON line in <log>
// (url, the tools offered, the tool results seen); the port is written to
// <port-file> once it listens. Streaming (server-sent events) and plain JSON
// answers are both served, as the client asks.
//
// usage: node mock-anthropic.mjs <port-file> <log> <tool> <input-json>
import http from "node:http";
import { appendFileSync, writeFileSync } from "node:fs";

const [portFile, log, tool, inputJson] = process.argv.slice(2);
const input = JSON.parse(inputJson);

function toolResults(body) {
  const out = [];
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type !== "tool_result") continue;
      const parts = Array.isArray(b.content) ? b.content : [{ type: "text", text: String(b.content ?? "") }];
      out.push({ is_error: !!b.is_error, text: parts.filter((p) => p.type === "text").map((p) => p.text).join("\n") });
    }
  }
  return out;
}

function reply(body) {
  const offered = (body.tools ?? []).map((t) => t.name);
  const results = toolResults(body);
  if (results.length > 0) {
    const r = results[results.length - 1];
    return { offered, results, blocks: [{ type: "text", text: `TOOL RESULT${r.is_error ? " (error)" : ""}: ${r.text}` }], stop: "end_turn" };
  }
  if (offered.includes(tool)) {
    return { offered, results, blocks: [{ type: "tool_use", id: "toolu_mock_1", name: tool, input }], stop: "tool_use" };
  }
  return { offered, results, blocks: [{ type: "text", text: "ok" }], stop: "end_turn" };
}

function message(r, model) {
  return {
    id: "msg_mock", type: "message", role: "assistant", model: model ?? "mock",
    content: r.blocks, stop_reason: r.stop, stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  };
}

function sse(res, r, model) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const m = message(r, model);
  send("message_start", { message: { ...m, content: [], stop_reason: null } });
  r.blocks.forEach((b, index) => {
    if (b.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index, delta: { type: "text_delta", text: b.text } });
    } else {
      send("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
      send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } });
    }
    send("content_block_stop", { index });
  });
  send("message_delta", { delta: { stop_reason: r.stop, stop_sequence: null }, usage: { output_tokens: 10 } });
  send("message_stop", {});
  res.end();
}

const server = http.createServer((req, res) => {
  let text = "";
  req.on("data", (d) => (text += d));
  req.on("end", () => {
    let body = {};
    try { body = JSON.parse(text); } catch {}
    if (!req.url.startsWith("/v1/messages") || req.url.startsWith("/v1/messages/count_tokens")) {
      appendFileSync(log, JSON.stringify({ url: req.url }) + "\n");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    const r = reply(body);
    appendFileSync(log, JSON.stringify({ url: req.url, tools: r.offered, results: r.results, answer: r.blocks }) + "\n");
    if (body.stream) sse(res, r, body.model);
    else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(message(r, body.model)));
    }
  });
});
server.listen(0, "127.0.0.1", () => writeFileSync(portFile, String(server.address().port)));
