// Throughput peer: @modelcontextprotocol/server 2.4 with serveStdio, serving
// the same `add` tool as servers/pkg-add.R. Modules come from the folder in
// BENCH_NPM_PEERS (bench/.npm-peers).
const req = require('node:module').createRequire(require('node:path').join(process.env.BENCH_NPM_PEERS, 'package.json'));
const { McpServer } = req('@modelcontextprotocol/server');
const { serveStdio } = req('@modelcontextprotocol/server/stdio');
const { z } = req('zod');

serveStdio(() => {
  const server = new McpServer({ name: 'ts-server-add', version: '2.4.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'add',
    { description: 'Add two numbers.', inputSchema: z.object({ x: z.number().describe('First number.'), y: z.number().describe('Second number.') }) },
    async ({ x, y }) => ({ content: [{ type: 'text', text: String(x + y) }] }),
  );
  return server;
});
