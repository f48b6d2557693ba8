// The official MCP TypeScript SDK client against Harness's /mcp.
// Usage: node client.mjs <mcp-url> <bearer-token>
// Prints one JSON object with what the client saw; exits 1 on any failure.
// Run by server/tests/mcp_sdk.rs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node client.mjs <mcp-url> <token>");
  process.exit(2);
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "harness-sdk-check", version: "1.0.0" });

try {
  await client.connect(transport);
  const server = client.getServerVersion();
  const { tools } = await client.listTools();
  // callTool validates structuredContent against the tool's outputSchema.
  const notify = await client.callTool({ name: "notify_human", arguments: { message: "sdk says hi" } });
  const ask = await client.callTool({ name: "ask_human", arguments: { question: "SDK: A or B?" } });
  const task = await client.callTool({ name: "get_task", arguments: {} });
  const refused = await client.callTool({ name: "ask_human", arguments: { question: "" } });
  let unknownTool = null;
  try {
    unknownTool = await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (err) {
    unknownTool = { thrown: String(err) };
  }
  console.log(JSON.stringify({
    server,
    tools: tools.map((t) => ({ name: t.name, outputSchema: !!t.outputSchema })),
    notify,
    ask,
    task,
    refused,
    unknownTool,
  }));
  await client.close();
} catch (err) {
  console.error(`MCP SDK client failed: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
}
