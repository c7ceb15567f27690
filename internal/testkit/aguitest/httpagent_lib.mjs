// The harness of httpagent.mjs and httpagent_batch.mjs: the official,
// unmodified @ag-ui/client HttpAgent pointed at luban, every raw response
// body teed to a directory for validate.mjs, every event checked against
// @ag-ui/core's EventSchema as it arrives.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HttpAgent } from "@ag-ui/client";
import { EventSchema } from "@ag-ui/core/schemas";

/** fail prints the failure and exits 1. */
export function fail(msg) {
  console.error("FAIL " + msg);
  process.exit(1);
}

/** check fails with msg unless cond. */
export function check(cond, msg) {
  if (!cond) fail(msg);
}

/**
 * newAgent is an HttpAgent for url (bearer token, threadId) whose fetch
 * writes every response body to outDir as <prefix>-<n>.sse; the agent
 * still reads it all. bodies() is how many it wrote.
 */
export function newAgent({ url, token, threadId, outDir, prefix }) {
  let bodies = 0;
  const teeFetch = async (input, init) => {
    const resp = await fetch(input, init);
    const raw = new Uint8Array(await resp.arrayBuffer());
    writeFileSync(join(outDir, `${prefix}-${++bodies}.sse`), raw);
    return new Response(raw, { status: resp.status, statusText: resp.statusText, headers: resp.headers });
  };
  const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` }, threadId, fetch: teeFetch });
  return { agent, bodies: () => bodies };
}

/**
 * run performs one agent.runAgent(params) and reports what it saw:
 * events (each validated), types, the RUN_FINISHED (finished), the
 * RUN_ERROR (error), and what runAgent threw (thrown).
 */
export async function run(agent, params) {
  const seen = { events: [], finished: null, error: null, thrown: null };
  const sub = {
    onEvent: ({ event }) => {
      const r = EventSchema.safeParse(event);
      if (!r.success) fail(`event does not validate: ${JSON.stringify(event)}: ${r.error}`);
      seen.events.push(event);
    },
    onRunFinishedEvent: (p) => {
      seen.finished = p;
    },
    onRunErrorEvent: ({ event }) => {
      seen.error = event;
    },
  };
  try {
    await agent.runAgent(params, sub);
  } catch (e) {
    seen.thrown = e;
  }
  seen.types = seen.events.map((e) => e.type);
  return seen;
}

/** results are the TOOL_CALL_RESULT events of a run. */
export const results = (s) => s.events.filter((e) => e.type === "TOOL_CALL_RESULT");
