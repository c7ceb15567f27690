// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk) as a host
// that speaks MCP Tasks (the 2025-11-25 tasks utility, its experimental
// client API), for tasks_test.go.
//
//   node tasks.mjs <luban base URL> <token> create <tool> <arguments JSON>
//   node tasks.mjs <luban base URL> <token> resume <taskId>
//   node tasks.mjs <luban base URL> <token> cancel <taskId>
//
// create: the tools/list view of the tool ({"tool": {...}}), then
// callToolStream with a task: {"taskCreated": Task}, {"taskStatus": Task}
// for each poll, then {"result": CallToolResult} or {"error": "..."} (the
// SDK calls tasks/result once the task is input_required, and that call
// fails when the connection drops).
// resume: a new connection (a host that kept the task id):
// {"task": tasks/get}, {"tasks": tasks/list's tasks}, then {"result":
// tasks/result} or {"error": "..."}.
// cancel: {"cancelled": tasks/cancel's task}, {"task": tasks/get}, then
// {"error": "..."} of a second tasks/cancel (a terminal task).
// It exits 0 after the last line, 1 after an error line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [base, token, mode, ...rest] = process.argv.slice(2);
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const fail = (e) => {
  out({ error: String(e?.message ?? e) });
  process.exit(1);
};

const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
  requestInit: { headers: { Authorization: "Bearer " + token } },
  reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
});
const client = new Client({ name: "luban-ts-tasks", version: "2.5.0" });
client.onerror = (e) => fail("transport: " + String(e?.message ?? e));
// A person answers: no timeout shorter than the test's own.
const opts = { timeout: 120_000 };

try {
  await client.connect(transport);
  if (mode === "create") {
    const [tool, args] = rest;
    const { tools } = await client.listTools();
    out({ tool: tools.find((t) => t.name === tool) ?? null, tasks: client.getServerCapabilities()?.tasks ?? null });
    const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: JSON.parse(args) }, CallToolResultSchema,
      { ...opts, task: { ttl: 60_000 } });
    for await (const m of stream) {
      if (m.type === "taskCreated") out({ taskCreated: m.task });
      else if (m.type === "taskStatus") out({ taskStatus: m.task });
      else if (m.type === "result") out({ result: m.result });
      else if (m.type === "error") fail(m.error);
    }
  } else if (mode === "resume") {
    const [taskId] = rest;
    out({ task: await client.experimental.tasks.getTask(taskId, opts) });
    out({ tasks: (await client.experimental.tasks.listTasks(undefined, opts)).tasks });
    out({ result: await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, opts) });
  } else if (mode === "cancel") {
    const [taskId] = rest;
    out({ cancelled: await client.experimental.tasks.cancelTask(taskId, opts) });
    out({ task: await client.experimental.tasks.getTask(taskId, opts) });
    await client.experimental.tasks.cancelTask(taskId, opts);
    out({ again: "a second cancel was accepted" });
  } else {
    fail("unknown mode " + mode);
  }
  await client.close();
  process.exit(0);
} catch (e) {
  fail(e);
}
