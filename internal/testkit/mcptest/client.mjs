// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk) calling
// one of luban's ask tools over streamable HTTP, for mcptest_test.go.
//
//   node client.mjs <luban base URL> <token> <tool> <arguments JSON> [<_meta JSON>]
//
// It writes one JSON object a line to stdout: {"protocol": "..."} once
// connected, {"progress": {...}} for each progress notification (with its
// _meta), then {"result": <CallToolResult>} or {"error": "<message>"} (a
// failed call, or the transport's error: the connection dropped), and exits
// 0 after a result, 1 after an error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, token, tool, args, meta] = process.argv.slice(2);
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
  requestInit: { headers: { Authorization: "Bearer " + token } },
  // A dropped connection is the test's point: no silent reconnects.
  reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
});
const client = new Client({ name: "luban-ts-test", version: "1.0.0" });
// The SDK reports a dropped stream here and leaves the call pending until
// its timeout; this host gives up on the call at once instead.
client.onerror = (e) => {
  out({ error: "transport: " + String(e?.message ?? e) });
  process.exit(1);
};
try {
  await client.connect(transport);
  out({ protocol: transport.protocolVersion ?? null });
  const params = { name: tool, arguments: JSON.parse(args) };
  if (meta) params._meta = JSON.parse(meta);
  const result = await client.callTool(params, undefined, {
    onprogress: (p) => out({ progress: p }),
    resetTimeoutOnProgress: true,
    timeout: 60_000,
  });
  out({ result });
  await client.close();
  process.exit(0);
} catch (e) {
  out({ error: String(e?.message ?? e) });
  process.exit(1);
}
