// Throughput peer: @modelcontextprotocol/sdk 1.32 (McpServer with its stdio
// server transport) serving the same `add` tool as servers/pkg-add.R.
// Modules come from the folder in BENCH_NPM_PEERS (bench/.npm-peers).
const req = require('node:module').createRequire(require('node:path').join(process.env.BENCH_NPM_PEERS, 'package.json'));
const { McpServer } = req('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = req('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = req('zod');

const server = new McpServer({ name: 'ts-sdk-add', version: '1.32.2' });
server.registerTool(
  'add',
  { description: 'Add two numbers.', inputSchema: { x: z.number().describe('First number.'), y: z.number().describe('Second number.') } },
  async ({ x, y }) => ({ content: [{ type: 'text', text: String(x + y) }] }),
);
server.connect(new StdioServerTransport());
