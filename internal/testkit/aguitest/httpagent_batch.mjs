// Drives luban with the official, unmodified @ag-ui/client HttpAgent through
// a pause of two questions (docs/design.md §32): one RUN_FINISHED whose
// interrupts[] holds both, a resume[] of two entries with one refused
// (RUN_ERROR invalid_answer naming resume[1], both stay open), then a
// resume[] of two valid entries: the run goes on and finishes.
//
// Usage: node httpagent_batch.mjs URL TOKEN THREAD OUTDIR
// It ends with "DONE <summary JSON>" and exit status 0, or prints the
// failure and exits 1. Every raw response body is written to OUTDIR for
// validate.mjs, and every event is checked against @ag-ui/core's
// EventSchema as it arrives.
import { check, fail, newAgent, results, run as runWith } from "./httpagent_lib.mjs";

const [url, token, threadId, outDir] = process.argv.slice(2);
const { agent } = newAgent({ url, token, threadId, outDir, prefix: "httpagent-batch" });
const run = (params) => runWith(agent, params);

// 1. Two questions in one model message: one interrupt outcome with both.
agent.addMessage({ id: "u1", role: "user", content: "两个问题" });
let s = await run();
check(!s.thrown && !s.error, `first run failed: ${s.thrown ?? JSON.stringify(s.error)}`);
check(s.finished?.outcome === "interrupt", `first run: outcome ${s.finished?.outcome}, events ${s.types}`);
check(s.types.filter((t) => t === "RUN_FINISHED").length === 1, `one RUN_FINISHED: ${s.types}`);
const its = agent.pendingInterrupts;
check(its.length === 2, `pendingInterrupts: ${JSON.stringify(its)}`);
check(its[0].toolCallId === "call_batch_1" && its[1].toolCallId === "call_batch_2", `call order: ${JSON.stringify(its)}`);
const ids = its.map((it) => it.responseSchema.properties.selections.items.enum);

// 2. A resume[] of two with one refused: nothing is consumed.
s = await run({
  resume: [
    { interruptId: its[0].id, status: "resolved", payload: { selections: [ids[0][0]] } },
    { interruptId: its[1].id, status: "resolved", payload: { selections: ["no-such-option"] } },
  ],
});
check(s.error?.code === "invalid_answer", `refused batch: ${JSON.stringify(s.error)} ${s.types}`);
const fields = (s.error.metadata?.details ?? []).map((d) => d.field);
check(fields.length === 1 && fields[0].startsWith("resume[1]."), `details name the entry: ${JSON.stringify(fields)}`);
check(results(s).length === 0, "nothing consumed");

// 3. Both at once: the run goes on and finishes.
s = await run({
  resume: [
    { interruptId: its[0].id, status: "resolved", payload: { selections: [ids[0][0]] } },
    { interruptId: its[1].id, status: "resolved", payload: { selections: [ids[1][1]] } },
  ],
});
check(!s.thrown && !s.error, `batch resume failed: ${s.thrown ?? JSON.stringify(s.error)}`);
check(s.finished?.outcome === "success", `batch resume: outcome ${s.finished?.outcome}, events ${s.types}`);
const got = results(s).map((r) => r.toolCallId);
check(got.length === 2 && got[0] === "call_batch_1" && got[1] === "call_batch_2", `results: ${JSON.stringify(got)}`);
check(agent.pendingInterrupts.length === 0, `no interrupt left: ${JSON.stringify(agent.pendingInterrupts)}`);

console.log("DONE " + JSON.stringify({ interrupts: its.length, results: got }));
