// Verifies webhook requests with the official Standard Webhooks library
// (npm standardwebhooks). Input on stdin: {"secret": "whsec_…",
// "messages": [{"headers": {...}, "body": "…"}]}. Prints one line per
// message, "ok <webhook-id>" or "FAIL <webhook-id>: <why>", and exits 1 when
// any failed. A tampered copy of each message must fail, so the verifier is
// known to be checking.
import { Webhook } from "standardwebhooks";

const input = JSON.parse(await new Promise((res) => {
  let s = "";
  process.stdin.on("data", (d) => (s += d));
  process.stdin.on("end", () => res(s));
}));
const wh = new Webhook(input.secret);
let failed = false;
for (const m of input.messages) {
  const id = m.headers["webhook-id"];
  try {
    wh.verify(m.body, m.headers);
  } catch (e) {
    console.log(`FAIL ${id}: ${e.message}`);
    failed = true;
    continue;
  }
  try {
    wh.verify(m.body + " ", m.headers);
    console.log(`FAIL ${id}: a tampered body verified`);
    failed = true;
    continue;
  } catch {
    // expected
  }
  console.log(`ok ${id}`);
}
process.exit(failed ? 1 : 0);
