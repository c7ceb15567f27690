// Drives luban through CopilotKit as an application runs it (docs/design.md
// §21 "Clients before 1.0", docs/agui.md "CopilotKit"): the CopilotKit
// runtime (@copilotkit/runtime 1.75.0, v2 endpoint on loopback) with luban
// as its AG-UI agent (the runtime's own @ag-ui/client 0.0.59 HttpAgent), and
// the headless front-end core that @copilotkit/react-core 1.74.0 is built on
// (@copilotkit/core 1.74.0's CopilotKitCore), with one front-end tool
// registered the way useHumanInTheLoop registers it: its handler waits
// until the person responds.
//
// Usage: node copilotkit.mjs LUBAN_URL TOKEN THREAD OUTDIR TOOLS_JSON
// TOOLS_JSON is a JSON array of front-end tools {name, description,
// parameters (JSON Schema)}.
//
// Line protocol with the Go test (copilotkit_test.go), one JSON object per
// line. The script prints {"ready": true} once the front end sees the
// runtime's luban agent. Then it reads commands from stdin:
//   {"op": "say", "text": "…"}            a user message and a run
//   {"op": "resume", "resume": [ … ]}     a run that answers the interrupts
//   {"op": "url", "url": "…"}             luban moved (a restart): the runtime's agent uses url
//   {"op": "respond", "result": …}        the person answers the waiting front-end tool
// and answers each say/resume with {"done": {outcomes, errors, pendingInterrupts, messages}}
// once the front end's run (with its follow-up runs) ended; a front-end tool
// call prints {"tool": {name, toolCallId, args}} and waits for "respond".
// Every response body luban sent is written to OUTDIR (luban-N.sse) for
// validate.mjs.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";
import { CopilotKitCore } from "@copilotkit/core";

const [lubanURL, token, threadId, outDir, toolsJSON] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
function fail(msg) {
  out({ fail: msg });
  process.exit(1);
}

// Every body luban answers is kept, and every event is checked against the
// runtime's own @ag-ui/core 0.0.59 schemas as it passes.
let bodies = 0;
const teeFetch = async (input, init) => {
  const resp = await fetch(input, init);
  const raw = new Uint8Array(await resp.arrayBuffer());
  writeFileSync(join(outDir, `luban-${++bodies}.sse`), raw);
  for (const frame of new TextDecoder().decode(raw).split("\n\n")) {
    if (!frame.startsWith("data: ")) continue;
    const r = EventSchemas.safeParse(JSON.parse(frame.slice(6)));
    if (!r.success) fail(`luban sent an event @ag-ui/core 0.0.59 rejects: ${frame}: ${r.error}`);
  }
  return new Response(raw, { status: resp.status, statusText: resp.statusText, headers: resp.headers });
};

// The runtime: luban is its AG-UI agent "luban".
const luban = new HttpAgent({ url: lubanURL, headers: { Authorization: `Bearer ${token}` }, fetch: teeFetch });
const runtime = new CopilotRuntime({ agents: { luban } });
const listener = createCopilotNodeListener({ runtime, basePath: "/api/copilotkit" });
const server = createServer(listener);
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const runtimeUrl = `http://127.0.0.1:${server.address().port}/api/copilotkit`;

// The front end. CopilotKitCore connects to its runtime only in a browser
// (it checks for window); the page's window is stood in for by the little
// it reads. A front-end tool's handler waits for the person, as
// useHumanInTheLoop's does until its render calls respond().
globalThis.window ??= { location: new URL("http://127.0.0.1/"), addEventListener() {}, removeEventListener() {} };
let respond = null;
const schemaOf = (json) => ({ toJSONSchema: () => json, "~standard": { version: 1, vendor: "json-schema", validate: (value) => ({ value }) } });
const tools = JSON.parse(toolsJSON || "[]").map((t) => ({
  name: t.name,
  description: t.description,
  parameters: schemaOf(t.parameters),
  handler: (args, { toolCall }) =>
    new Promise((resolve) => {
      respond = resolve;
      out({ tool: { name: t.name, toolCallId: toolCall.id, args } });
    }),
}));
const core = new CopilotKitCore({ runtimeUrl, tools });
let run = null;
core.subscribe({
  onError: ({ error, code }) => run?.errors.push({ code, message: String(error?.message ?? error) }),
});
let agent;
for (let i = 0; i < 600 && !(agent = core.getAgent("luban")); i++) await new Promise((r) => setTimeout(r, 50));
if (!agent) fail(`the front end never saw the runtime's luban agent (status ${core.runtimeConnectionStatus})`);
agent.threadId = threadId;
agent.subscribe({
  onRunFinishedEvent: ({ outcome, event }) => run?.outcomes.push({ outcome, metadata: event.metadata }),
  onRunErrorEvent: ({ event }) => run?.errors.push({ code: event.code, message: event.message }),
});
out({ ready: true, runtimeUrl });

async function runOnce(params) {
  run = { outcomes: [], errors: [] };
  try {
    await core.runAgent({ agent, ...params });
  } catch (e) {
    run.errors.push({ code: "thrown", message: String(e?.message ?? e) });
  }
  const r = run;
  run = null;
  return {
    ...r,
    pendingInterrupts: agent.pendingInterrupts,
    messages: agent.messages.map((m) => ({ id: m.id, role: m.role, content: m.content, toolCallId: m.toolCallId, toolCalls: m.toolCalls })),
  };
}

// Commands run one at a time, except respond, which answers a tool the
// running command waits on.
let chain = Promise.resolve();
let n = 0;
const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const cmd = JSON.parse(line);
  if (cmd.op === "respond") {
    if (!respond) fail("respond: no front-end tool is waiting");
    const r = respond;
    respond = null;
    r(cmd.result);
    return;
  }
  if (cmd.op === "url") {
    luban.url = cmd.url;
    out({ url: cmd.url });
    return;
  }
  chain = chain.then(async () => {
    if (cmd.op === "say") {
      agent.addMessage({ id: `user-${++n}`, role: "user", content: cmd.text });
      out({ done: await runOnce({}) });
    } else if (cmd.op === "resume") {
      out({ done: await runOnce({ resume: cmd.resume }) });
    } else {
      fail(`unknown op ${cmd.op}`);
    }
  });
});
rl.on("close", async () => {
  await chain;
  server.close();
  process.exit(0);
});
