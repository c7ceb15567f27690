// relay.mjs — a Slack message when a luban question waits (docs/notifications.md).
// Run: npm ci && node relay.mjs
// Env: LUBAN_WEBHOOK_SECRET (the webhook's whsec_… secret), SLACK_WEBHOOK_URL
// (a Slack incoming webhook), LUBAN_URL (where people open luban), PORT
// (default 8787; 0 picks a free one). It prints "relay listening on <url>".
import http from "node:http";
import { Webhook } from "standardwebhooks";

const wh = new Webhook(process.env.LUBAN_WEBHOOK_SECRET);
const seen = new Set(); // webhook-ids already relayed (luban may send one again)

http
  .createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      let msg;
      try {
        msg = wh.verify(body, req.headers); // the raw body, before any JSON parsing
      } catch {
        res.writeHead(401).end();
        return;
      }
      const id = req.headers["webhook-id"];
      if (!seen.has(id) && msg.type === "interaction.requested") {
        const { sessionId, sessionTitle, request } = msg.data;
        const text = `luban needs you in “${sessionTitle}”: *${request.title}* — ${process.env.LUBAN_URL}/s/${sessionId}`;
        const r = await fetch(process.env.SLACK_WEBHOOK_URL, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ text }),
        }).catch(() => null);
        if (!r?.ok) {
          res.writeHead(502).end(); // luban retries with the same webhook-id
          return;
        }
      }
      seen.add(id);
      res.writeHead(204).end();
    });
  })
  .listen(Number(process.env.PORT ?? 8787), "127.0.0.1", function () {
    console.log(`relay listening on http://127.0.0.1:${this.address().port}`);
  });
