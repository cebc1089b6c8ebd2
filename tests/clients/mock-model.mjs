// A stand-in for a model provider's Responses API on 127.0.0.1: it records
// each request (time in ms since the epoch and the names of the tools
// offered) as a JSON line in <log>, answers 500, and writes its port to
// <port-file> once it listens. For the Codex CLI test in
// tests/testthat/test-config-clients.R.
//
// usage: node mock-model.mjs <port-file> <log>
import http from "node:http";
import { appendFileSync, writeFileSync } from "node:fs";

const [portFile, log] = process.argv.slice(2);
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    let tools = [];
    try {
      tools = (JSON.parse(body).tools ?? []).map((t) => t.name ?? t.function?.name ?? t.type);
    } catch {}
    appendFileSync(log, JSON.stringify({ at: Date.now(), url: req.url, tools }) + "\n");
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "mock model", type: "server_error" } }));
  });
});
server.listen(0, "127.0.0.1", () => writeFileSync(portFile, String(server.address().port)));
