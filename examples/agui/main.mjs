// A terminal client of luban's AG-UI endpoint (POST /api/agui), built on the
// official @ag-ui/client HttpAgent and nothing else.
//
//   LUBAN_URL=http://127.0.0.1:8080 LUBAN_TOKEN=… node main.mjs "帮我部署" [THREAD]
//
// It sends the message, prints the agent's text and tool calls as they
// stream, and when the run pauses on a question (RUN_FINISHED with an
// interrupt) it prints the question and reads the answer from standard
// input, one line: an option number (several, comma separated, for a
// multiple choice), free text, or an empty line to cancel. The answer goes
// back as a resume entry; the loop ends when the run finishes. Give THREAD
// to continue a thread later, even after luban restarted: a question left
// open is asked again.
import { createInterface } from "node:readline";
import { HttpAgent } from "@ag-ui/client";

const base = (process.env.LUBAN_URL ?? "http://127.0.0.1:8080").replace(/\/$/, "");
const token = process.env.LUBAN_TOKEN;
const [message, threadId] = process.argv.slice(2);
if (!token) {
  console.error("LUBAN_TOKEN is required (the token of `luban serve`)");
  process.exit(2);
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function readLine(prompt) {
  process.stdout.write(prompt);
  const { value, done } = await lines.next();
  return done ? "" : value.trim();
}

const agent = new HttpAgent({ url: `${base}/api/agui`, headers: { Authorization: `Bearer ${token}` }, ...(threadId ? { threadId } : {}) });
console.log(`thread ${agent.threadId}`);

const printer = {
  onTextMessageContentEvent: ({ event }) => process.stdout.write(event.delta),
  onTextMessageEndEvent: () => process.stdout.write("\n"),
  onToolCallEndEvent: ({ toolCallName, toolCallArgs }) => console.log(`[tool] ${toolCallName} ${JSON.stringify(toolCallArgs)}`),
  onToolCallResultEvent: ({ event }) => console.log(`[result] ${event.content}`),
  onRunErrorEvent: ({ event }) => {
    const details = event.metadata?.details?.map((d) => `${d.field}: ${d.message}`).join("; ");
    console.log(`[error] ${event.code}: ${event.message}${details ? ` (${details})` : ""}`);
  },
};

// answerFor turns a typed line into the resume payload of the interrupt's
// question (the answer part of POST /api/chat/continue).
function answerFor(req, line) {
  const options = req.options ?? [];
  if (["single", "multiple", "toggle"].includes(req.mode)) {
    const picks = line.split(",").map((s) => Number.parseInt(s.trim(), 10));
    if (picks.every((n) => n >= 1 && n <= options.length)) {
      return { selections: picks.map((n) => options[n - 1].id), customInput: "" };
    }
    return { selections: [], customInput: line };
  }
  return { selections: [], customInput: line };
}

async function ask(it) {
  const req = it.metadata?.inputRequest ?? {};
  console.log(`\n? ${it.message}${req.description ? `\n  ${req.description}` : ""}`);
  if (req.mode === "questions") {
    const answers = [];
    for (const q of req.questions) {
      console.log(`  ${q.question}`);
      q.options.forEach((o, i) => console.log(`    ${i + 1}. ${o.label}${o.description ? ` — ${o.description}` : ""}`));
      const line = await readLine("  > ");
      if (line === "") return { interruptId: it.id, status: "cancelled" };
      const picks = line.split(",").map((s) => Number.parseInt(s.trim(), 10));
      answers.push(picks.every((n) => n >= 1 && n <= q.options.length)
        ? { question: q.question, selected: picks.map((n) => q.options[n - 1].label), other: "" }
        : { question: q.question, selected: [], other: line });
    }
    return { interruptId: it.id, status: "resolved", payload: { answers } };
  }
  (req.options ?? []).forEach((o, i) => console.log(`  ${i + 1}. ${o.label}${o.recommended ? " (recommended)" : ""}`));
  const line = await readLine(`  [${req.mode}] > `);
  if (line === "") return { interruptId: it.id, status: "cancelled" };
  return { interruptId: it.id, status: "resolved", payload: answerFor(req, line) };
}

let outcome = null;
let params;
if (message) {
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: message });
}
for (;;) {
  let finished = null;
  let failed = false;
  try {
    await agent.runAgent(params, {
      ...printer,
      onRunFinishedEvent: (p) => {
        finished = p;
      },
      onRunErrorEvent: (p) => {
        failed = true;
        printer.onRunErrorEvent(p);
      },
    });
  } catch (e) {
    console.log(`[error] ${e.message}`);
    failed = true;
  }
  if (finished?.outcome === "interrupt") {
    params = { resume: [await ask(agent.pendingInterrupts[0])] };
    continue;
  }
  if (failed && agent.pendingInterrupts.length > 0) {
    // An invalid answer: the question is still open; ask again.
    params = { resume: [await ask(agent.pendingInterrupts[0])] };
    continue;
  }
  outcome = failed ? "error" : finished?.outcome ?? "none";
  break;
}
console.log(`\nrun finished: ${outcome}`);
process.exit(outcome === "success" || outcome === "cancelled" ? 0 : 1);
