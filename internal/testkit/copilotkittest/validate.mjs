// Validates raw AG-UI SSE against the schemas of @ag-ui/core 0.0.59, the version
// CopilotKit's runtime 1.75.0 and react-core 1.74.0 pin (docs/design.md §21
// "Clients before 1.0").
// Usage: node validate.mjs FILE...  Each FILE holds the raw bytes of one
// POST /api/agui response. Every "data:" frame must parse as JSON and
// validate against EventSchemas; the stream must also pass the client's own
// sequence verification (verifyEvents of @ag-ui/client). Prints one JSON
// line per file: {"file", "ok", "events", "types"}; exits 1 when any file
// failed (after checking them all).
import { readFileSync } from "node:fs";
import { EventSchemas as EventSchema } from "@ag-ui/core";
import { verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";

let failed = false;
for (const file of process.argv.slice(2)) {
  const raw = readFileSync(file, "utf8");
  const events = [];
  let ok = true;
  for (const frame of raw.split("\n\n")) {
    const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
    if (data.length === 0) continue;
    let ev;
    try {
      ev = JSON.parse(data.join("\n"));
    } catch (e) {
      console.error(`${file}: frame is not JSON: ${JSON.stringify(frame)}`);
      ok = false;
      continue;
    }
    const r = EventSchema.safeParse(ev);
    if (!r.success) {
      console.error(`${file}: event does not validate against @ag-ui/core 0.0.59 EventSchemas: ${JSON.stringify(ev)}\n${r.error}`);
      ok = false;
    }
    events.push(ev);
  }
  try {
    await lastValueFrom(from(events).pipe(verifyEvents(false), toArray()), { defaultValue: [] });
  } catch (e) {
    console.error(`${file}: the event sequence fails @ag-ui/client 0.0.59 verifyEvents: ${e.message}`);
    ok = false;
  }
  if (!ok) failed = true;
  console.log(JSON.stringify({ file, ok, events: events.length, types: events.map((e) => e.type) }));
}
process.exit(failed ? 1 : 0);
