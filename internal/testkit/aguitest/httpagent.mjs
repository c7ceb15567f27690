// Drives luban with the official, unmodified @ag-ui/client HttpAgent
// (docs/design.md §13): ask → interrupt → an invalid answer → (luban restarts) →
// resume → success → a replayed resume → a new question → cancel.
//
// Usage: node httpagent.mjs URL TOKEN THREAD OUTDIR
// Line protocol with the Go test (internal/testkit/aguitest/httpagent_test.go):
// the script prints "INTERRUPT <interrupt JSON>" and then "RESTART"; it
// reads one line from stdin, the URL of the restarted server, and carries
// on with the same HttpAgent. It ends with "DONE <summary JSON>" and exit
// status 0, or prints the failure and exits 1. Every raw response body is
// written to OUTDIR for validate.mjs, and every event is also checked here
// against @ag-ui/core's EventSchema as it arrives.
import { createInterface } from "node:readline";
import { check, fail, newAgent, results, run as runWith } from "./httpagent_lib.mjs";

const [url, token, threadId, outDir] = process.argv.slice(2);
const { agent, bodies } = newAgent({ url, token, threadId, outDir, prefix: "httpagent" });
const run = (params) => runWith(agent, params);

// 1. A question.
agent.addMessage({ id: "u1", role: "user", content: "帮我部署" });
let s = await run();
check(!s.thrown && !s.error, `first run failed: ${s.thrown ?? JSON.stringify(s.error)}`);
check(s.finished?.outcome === "interrupt", `first run: outcome ${s.finished?.outcome}, events ${s.types}`);
check(agent.pendingInterrupts.length === 1, `pendingInterrupts: ${JSON.stringify(agent.pendingInterrupts)}`);
const it = agent.pendingInterrupts[0];
check(it.reason === "input_required" && it.toolCallId && it.responseSchema && it.expiresAt && it.metadata?.inputRequest?.id === it.id,
  `interrupt: ${JSON.stringify(it)}`);
const ids = it.responseSchema.properties.selections.items.enum;
console.log("INTERRUPT " + JSON.stringify(it));

// 2. An invalid answer: RUN_ERROR invalid_answer, the interrupt stays open.
s = await run({ resume: [{ interruptId: it.id, status: "resolved", payload: { selections: ["no-such-option"] } }] });
check(s.error?.code === "invalid_answer" && Array.isArray(s.error.metadata?.details) && s.error.metadata.details.length > 0,
  `invalid answer: ${JSON.stringify(s.error)} ${s.types}`);
check(agent.pendingInterrupts.length === 1 && agent.pendingInterrupts[0].id === it.id, "the interrupt stays open after an invalid answer");

// 3. luban restarts between the interrupt and the resume.
console.log("RESTART");
const rl = createInterface({ input: process.stdin });
const next = await new Promise((resolve) => rl.once("line", resolve));
rl.close();
agent.url = next.trim();

// 4. The resume, on the restarted server, with the whole history again.
s = await run({ resume: [{ interruptId: it.id, status: "resolved", payload: { selections: [ids[0]] } }] });
check(!s.thrown && !s.error, `resume failed: ${s.thrown ?? JSON.stringify(s.error)}`);
check(s.finished?.outcome === "success", `resume: outcome ${s.finished?.outcome}, events ${s.types}`);
check(results(s).length === 1 && results(s)[0].toolCallId === it.toolCallId, `resume results: ${JSON.stringify(results(s))}`);
check(JSON.parse(results(s)[0].content).selections[0] === ids[0], "the answer is the ToolResult of the original call");
check(agent.pendingInterrupts.length === 0, "no interrupt left");
const toolMessages = agent.messages.filter((m) => m.role === "tool" && m.toolCallId === it.toolCallId);
check(toolMessages.length === 1, `tool messages: ${JSON.stringify(agent.messages)}`);

// 5. The same resume replayed: no second ToolResult, the run's own outcome.
s = await run({ resume: [{ interruptId: it.id, status: "resolved", payload: { selections: [ids[0]] } }] });
check(s.finished?.outcome === "success", `replay: outcome ${s.finished?.outcome}, ${s.types}`);
check(results(s).length === 0, `replay produced a ToolResult: ${s.types}`);

// 6. A new question in the same thread, cancelled.
agent.addMessage({ id: "u2", role: "user", content: "再部署一次" });
s = await run();
check(s.finished?.outcome === "interrupt", `second question: ${s.finished?.outcome} ${s.types}`);
const it2 = agent.pendingInterrupts[0];
check(it2 && it2.id !== it.id, "a new interrupt");
s = await run({ resume: [{ interruptId: it2.id, status: "cancelled" }] });
check(s.finished?.outcome === "cancelled", `cancel: outcome ${s.finished?.outcome} ${s.types}`);
check(agent.pendingInterrupts.length === 0, "cancelled interrupt closed");

console.log("DONE " + JSON.stringify({ interrupt: it.id, second: it2.id, bodies: bodies(), messages: agent.messages.length }));
process.exit(0);
