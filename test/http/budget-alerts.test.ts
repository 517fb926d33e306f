import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import {
  DEFAULT_ALERT_SETTINGS,
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from "../../src/gateway/budget-alerts.js";
import { clientFor } from "../helpers/server.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { ask, chat, type GatewayBench, guardKey, orgWithKey, startGatewayBench } from "./gateway-support.js";

const SECRET = "test-webhook-secret-0123456789";
/** Sonnet at $3 and $15 per million tokens: 1,000 prompt and 100 completion tokens cost 4,500 µ$. */
const USAGE = { prompt_tokens: 1000, completion_tokens: 100 };

/** What an operator's receiver checks: the HMAC-SHA256 of "<timestamp>.<body>" under the shared secret. */
function verifies(headers: Record<string, unknown>, body: string, secret = SECRET): boolean {
  const timestamp = String(headers[TIMESTAMP_HEADER]);
  const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
  return headers[SIGNATURE_HEADER] === expected;
}

describe("budget alerts (docs/gateway.md#budget-alerts)", () => {
  it("alert_thresholds are whole percents from 1 to 100, stored once each in order; bad ones are a 400 that stores nothing (docs/api.md#guardrails)", async () => {
    const bench = await startGatewayBench();
    try {
      const org = await bench.server.newOrg();
      const api = clientFor(bench.server, org.key);
      const made = await api.post("/api/v1/guardrails", {
        name: "alerts",
        limit_usd: 1,
        reset_interval: "daily",
        alert_thresholds: [80, 50, 100, 80],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.deepEqual(made.body.data.alert_thresholds, [50, 80, 100]);
      const id = made.body.data.id;
      for (const bad of [[0], [101], [50.5], [], ["50"], Array.from({ length: 11 }, (_, i) => i + 1)]) {
        const res = await api.patch(`/api/v1/guardrails/${id}`, { alert_thresholds: bad });
        assert.equal(res.status, 400, JSON.stringify(bad));
        assert.equal(res.body.error.message, "Invalid request parameters");
      }
      assert.deepEqual((await api.get(`/api/v1/guardrails/${id}`)).body.data.alert_thresholds, [50, 80, 100]);
      const cleared = await api.patch(`/api/v1/guardrails/${id}`, { alert_thresholds: null });
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      assert.equal(cleared.body.data.alert_thresholds, null);
    } finally {
      await bench.close();
    }
  });

  describe("with a webhook receiver", () => {
    let bench: GatewayBench;
    let clock = new Date("2025-03-10T12:00:00.000Z");
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
    before(async () => {
      receiver = await startWebhookReceiver();
      bench = await startGatewayBench({
        now: () => clock,
        alerts: { ...DEFAULT_ALERT_SETTINGS, webhookUrl: receiver.url, secret: SECRET, firstRetryMs: 5 },
      });
    });
    after(async () => {
      await bench.close();
      await receiver.close();
    });

    it("each threshold fires once per window, in the audit log and as a signed event; the next window fires again", async () => {
      const { org, steps, key } = await orgWithKey(bench);
      const id = await guardKey(steps, key, {
        limit_usd: 0.01,
        reset_interval: "daily",
        alert_thresholds: [40, 80, 100],
      });
      bench.script.next = () => ({ usage: USAGE });
      try {
        // 4,500, 9,000, 13,500 µ$ of 10,000: past 40%, 80%, then 100%; the fourth is refused.
        for (let i = 0; i < 3; i++)
          assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
        assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 403);
        await receiver.received(3);
        clock = new Date("2025-03-11T00:00:00.000Z");
        assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
        await receiver.received(4);
      } finally {
        bench.script.next = undefined;
      }
      const events = receiver.deliveries.map((d) => JSON.parse(d.body));
      const seen = events.map((e) => `${e.data.window_start} ${e.data.threshold_percent}`).sort();
      assert.deepEqual(seen, [
        "2025-03-10T00:00:00.000Z 100",
        "2025-03-10T00:00:00.000Z 40",
        "2025-03-10T00:00:00.000Z 80",
        "2025-03-11T00:00:00.000Z 40",
      ]);
      for (const [i, d] of receiver.deliveries.entries()) {
        assert.ok(verifies(d.headers, d.body), "the signature verifies");
        assert.ok(!verifies(d.headers, d.body.replace("budget", "Budget")), "a changed body does not verify");
        assert.equal(d.headers[EVENT_ID_HEADER], events[i].id);
        assert.equal(events[i].type, "budget.threshold_reached");
        assert.equal(events[i].data.guardrail_id, id);
        assert.equal(events[i].data.key_hash, key.hash);
        assert.equal(events[i].data.limit_usd, 0.01);
      }
      const hundred = events.find((e) => e.data.threshold_percent === 100);
      assert.equal(hundred.data.spend_usd, 0.0135);
      assert.equal(hundred.data.resets_at, "2025-03-11T00:00:00.000Z");
      // The dedupe is the database's: one audit entry per window and threshold, whoever settled.
      const audit = await clientFor(bench.server, org.key).get(
        `/api/v1/audit-log?resource_id=${id}&limit=100`,
      );
      const alerts = audit.body.data.filter((e: { action: string }) => e.action === "guardrail.budget_alert");
      assert.equal(alerts.length, 4);
      assert.ok(alerts.every((e: { actor_key_hash: string }) => e.actor_key_hash === "system"));
    });

    it("a guardrail without thresholds sends nothing", async () => {
      const { steps, key } = await orgWithKey(bench);
      await guardKey(steps, key, { limit_usd: 0.01, reset_interval: "daily" });
      const before = receiver.deliveries.length;
      bench.script.next = () => ({ usage: USAGE });
      try {
        for (let i = 0; i < 3; i++)
          assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
      } finally {
        bench.script.next = undefined;
      }
      // A marker guardrail with a threshold, settled after: its event comes after anything the first sent.
      const other = await orgWithKey(bench);
      await guardKey(other.steps, other.key, {
        limit_usd: 0.01,
        reset_interval: "daily",
        alert_thresholds: [1],
      });
      bench.script.next = () => ({ usage: USAGE });
      try {
        assert.equal((await chat(bench.server, other.key.secret, ask("hi"))).status, 200);
      } finally {
        bench.script.next = undefined;
      }
      await receiver.received(before + 1);
      const sent = receiver.deliveries.slice(before).map((d) => JSON.parse(d.body).data.key_hash);
      assert.deepEqual(sent, [other.key.hash]);
    });
  });

  it("a failing receiver is retried with the same event until it answers 2xx, and the request is answered while the first attempt is still unanswered", async () => {
    // The first delivery is held open; the next one fails; the third succeeds.
    const receiver = await startWebhookReceiver((attempt) =>
      attempt === 1 ? "hold" : attempt === 2 ? 500 : 200,
    );
    const bench = await startGatewayBench({
      alerts: { ...DEFAULT_ALERT_SETTINGS, webhookUrl: receiver.url, secret: SECRET, firstRetryMs: 5 },
    });
    try {
      const { steps, key } = await orgWithKey(bench);
      await guardKey(steps, key, { limit_usd: 0.01, reset_interval: "daily", alert_thresholds: [10] });
      bench.script.next = () => ({ usage: USAGE });
      const answered = await chat(bench.server, key.secret, ask("hi"));
      bench.script.next = undefined;
      assert.equal(answered.status, 200);
      // The request's answer is in hand; only now does the test let the receiver answer at all.
      await receiver.received(1);
      const first = receiver.deliveries[0];
      assert.ok(first);
      first.answer(503);
      await receiver.received(3);
      const ids = receiver.deliveries.map((d) => d.headers[EVENT_ID_HEADER]);
      assert.equal(new Set(ids).size, 1, "every attempt carries the same event");
      for (const d of receiver.deliveries) assert.ok(verifies(d.headers, d.body));
    } finally {
      await bench.close();
      await receiver.close();
    }
    assert.equal(receiver.deliveries.length, 3, "nothing is sent after a 2xx");
  });
});
