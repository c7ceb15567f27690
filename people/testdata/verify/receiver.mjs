// A webhook receiver that checks every request with the official Standard
// Webhooks library (npm standardwebhooks) before accepting it, as a real
// receiver would. Env: WEBHOOK_SECRET ("whsec_…"). It listens on
// 127.0.0.1 (a free port), prints "listening <url>", then one JSON line per
// request: {"id", "type", "requestId", "verified", "error"?, "n"} where n counts the
// requests with that webhook-id so far. A verified request answers 204, a
// refused one 401 (the sender retries it).
import http from "node:http";
import { Webhook } from "standardwebhooks";

const wh = new Webhook(process.env.WEBHOOK_SECRET);
const seen = new Map();
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const id = req.headers["webhook-id"] ?? "";
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    let msg = null;
    let error;
    try {
      msg = wh.verify(body, req.headers);
    } catch (e) {
      error = String(e?.message ?? e);
    }
    console.log(JSON.stringify({ id, type: msg?.type ?? "", requestId: msg?.data?.request?.id ?? "", verified: !!msg, error, n }));
    res.writeHead(msg ? 204 : 401).end();
  });
});
server.listen(0, "127.0.0.1", () => console.log(`listening http://127.0.0.1:${server.address().port}`));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
