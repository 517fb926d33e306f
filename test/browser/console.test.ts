import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { buildConsole } from "../../scripts/build-console.js";
import { createManagementKey } from "../../src/services/keys.js";
import { call, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { ask, chat, type GatewayBench, startGatewayBench } from "../http/gateway-support.js";

/**
 * The console driven in a real browser (README.md#admin-console): Debian's Chromium, headless,
 * through puppeteer-core, which never downloads a browser of its own. The service runs with the
 * bundled local upstream standing in for every provider, so a governed request really is spent.
 */
const CHROMIUM = "/usr/bin/chromium";
const MISSING = `${CHROMIUM} is absent: the browser test of the console is skipped. Install it with: apt-get install -y chromium`;
if (!existsSync(CHROMIUM)) console.warn(`\n*** ${MISSING} ***\n`);

/**
 * Every wait for the page has this bound, so a broken page fails the test instead of hanging it. It
 * is generous: Chromium on a loaded 2-core machine took over 30 s for one step, and only a page that
 * never shows what is awaited should fail.
 */
const WAIT = { timeout: 60_000 };
/**
 * The README shows these: the test takes them as it passes each page, into docs/screenshots with
 * UPDATE_SCREENSHOTS=1 and otherwise into its temporary folder, so a plain test run leaves the
 * working tree as it was (names, keys and dates differ on every run).
 */
const DOCS_SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "screenshots");
const DESKTOP = { width: 1100, height: 800 };
/** The width the audit log and the form's errors are checked at (docs/behaviour.md#admin-console). */
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 800 };

describe("the admin console in Chromium (README.md#admin-console)", {
  skip: existsSync(CHROMIUM) ? false : MISSING,
}, () => {
  let bench: GatewayBench;
  let browser: Browser;
  let page: Page;
  let org: TestOrg;
  let other: TestOrg;
  const dir = mkdtempSync(join(tmpdir(), "guardrails-browser-"));
  const screenshots = process.env.UPDATE_SCREENSHOTS === "1" ? DOCS_SCREENSHOTS : join(dir, "screenshots");

  before(async () => {
    await buildConsole(join(dir, "console"));
    bench = await startGatewayBench({ consoleDir: join(dir, "console") });
    org = await bench.server.newOrg();
    other = await bench.server.newOrg();
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: join(dir, "profile"),
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    page = await browser.newPage();
    await page.setViewport(DESKTOP);
    page.setDefaultTimeout(WAIT.timeout);
    // The console asks before deleting or revoking; the administrator says yes.
    page.on("dialog", (dialog) => void dialog.accept());
    mkdirSync(screenshots, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await bench?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? "");
  const xpath = (path: string) => page.waitForSelector(`::-p-xpath(${path})`, WAIT);
  /**
   * Waits until the page's reads and writes are answered: a page re-renders when they land, and
   * typing into or reading from it before then races that re-render.
   */
  const settled = () => page.waitForNetworkIdle({ idleTime: 250, timeout: WAIT.timeout });
  const clickButton = async (label: string) => {
    const button = await xpath(`//button[normalize-space(.)="${label}"]`);
    assert.ok(button, `a button "${label}"`);
    await button.click();
    await settled();
  };
  const visit = async (route: string, heading: string) => {
    await page.click(`nav a[href='#${route}']`);
    await xpath(`//h1[.="${heading}"]`);
    await settled();
  };
  /** Waits for a table row holding these cell texts, in this order (other cells between them allowed). */
  const row = (...cells: string[]) =>
    page.waitForFunction(
      (wanted: string[]) =>
        [...document.querySelectorAll("tr")].some((tr) => {
          const texts = [...tr.cells].map((c) => c.textContent ?? "");
          let at = 0;
          for (const t of texts) if (t === wanted[at]) at++;
          return at === wanted.length;
        }),
      WAIT,
      cells,
    );
  const shoot = (name: string) => page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  const noSidewaysScroll = () =>
    page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  /**
   * Where a field's error sits against the field: its top below the field's bottom (px) and its
   * left edge against the field's; both small when the error is shown beside the field.
   */
  const errorBeside = (id: string) =>
    page.$eval(`#${id}`, (field) => {
      const error = document.getElementById(`${field.id}-error`);
      if (!error) return undefined;
      const f = field.getBoundingClientRect();
      const e = error.getBoundingClientRect();
      return { below: e.top - f.bottom, left: Math.abs(e.left - f.left), width: e.width };
    });
  const assertBeside = async (id: string) => {
    const at = await errorBeside(id);
    assert.ok(at, `#${id} has no error beside it`);
    assert.ok(at.below >= 0 && at.below < 24, `#${id}'s error is ${at.below}px below it`);
    assert.ok(at.left < 4, `#${id}'s error starts ${at.left}px from it`);
    assert.ok(at.width > 200, `#${id}'s error is ${at.width}px wide`);
  };

  it("signs in, creates a guardrail with a redact filter, assigns it to a new key, sees the redaction in Try a request, sees a governed request's spend on the chart, revokes the key and signs out (README.md#admin-console)", async () => {
    const theirs = await call(bench.server, "POST", "/api/v1/guardrails", {
      key: other.key,
      body: { name: "another organization's guardrail" },
    });
    assert.equal(theirs.status, 201);

    // Without a session, the console shows the sign-in.
    await page.goto(`${bench.server.origin}/`);
    await page.waitForSelector("#management-key", WAIT);
    await shoot("sign-in");
    await page.type("#management-key", org.key);
    await clickButton("Sign in");
    await xpath("//h1[.='Guardrails']");

    // Nothing secret is reachable by the page's script.
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0);
    assert.equal(await page.evaluate(() => document.cookie.includes("gr_session")), false);
    const session = (await browser.cookies()).find((c) => c.name === "gr_session");
    assert.ok(session, "the session cookie is set");
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Strict");

    // The keyboard's first stop skips the navigation.
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");

    // No name, a negative limit and a word among the alert percents: the schema's 400, each issue
    // in plain words beside its field (docs/behaviour.md#console-field-errors), nothing stored.
    await page.setViewport(WIDE);
    await page.click("a[href^='#/guardrails/new']");
    await page.waitForSelector("#name", WAIT);
    await page.select("#builtin-email", "redact");
    await page.type("#limit_usd", "-1");
    await page.type("#alert_thresholds", "50, many");
    await clickButton("Save");
    await page.waitForSelector("#name-error", WAIT);
    assert.equal(await text("#name-error"), "Give the guardrail a name.");
    assert.equal(await text("#limit_usd-error"), "The limit cannot be negative.");
    assert.match(await text("#alert_thresholds-error"), /^Alert percents are whole numbers from 1 to 100/);
    assert.equal(
      await page.$eval("form > .error", (el) => el.textContent),
      "Not saved: 3 fields need a change, shown beside each.",
    );
    // The first field in error has the focus: the reader lands beside its message.
    assert.equal(await page.evaluate(() => document.activeElement?.id), "name");
    for (const id of ["name", "limit_usd", "alert_thresholds"]) await assertBeside(id);

    // An edited field loses its message; the service's own checks then find a pattern RE2 refuses
    // and a budget without its interval, each said beside its field.
    await page.type("#name", "pii");
    assert.equal(await page.$("#name-error"), null);
    await page.$eval("#limit_usd", (el) => {
      (el as HTMLInputElement).value = "";
    });
    await page.type("#limit_usd", "5");
    await page.$eval("#alert_thresholds", (el) => {
      (el as HTMLInputElement).value = "";
    });
    await page.type("#alert_thresholds", "50, 90");
    await clickButton("Add pattern");
    await page.type("#pattern-0", "(?<=ticket-)[0-9]+");
    await clickButton("Save");
    await page.waitForSelector("#pattern-0-error", WAIT);
    assert.equal(
      await text("#pattern-0-error"),
      "This pattern is not valid RE2: invalid perl operator “(?<=”. RE2 has no lookahead, lookbehind or backreferences.",
    );
    assert.equal(
      await text("#reset_interval-error"),
      "Choose how often the budget resets, or clear the limit.",
    );
    assert.equal(await page.$eval("#pattern-0", (el) => el.getAttribute("aria-invalid")), "true");
    assert.equal(await page.$eval("#reset_interval", (el) => el.getAttribute("aria-invalid")), "true");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "reset_interval");
    for (const id of ["pattern-0", "reset_interval"]) await assertBeside(id);
    // Nothing the page shows is the validator's or the service's own wording.
    const shown = await page.$$eval(".error, .field-error", (els) =>
      els.map((e) => e.textContent).join(" | "),
    );
    assert.doesNotMatch(shown, /must NOT|invalid regex pattern|\/\d+\/|limit_usd/);
    await shoot("guardrail-form-errors");
    await page.setViewport(PHONE);
    for (const id of ["pattern-0", "reset_interval"]) await assertBeside(id);
    assert.ok(await noSidewaysScroll());
    await shoot("guardrail-form-errors-phone");
    await page.setViewport(DESKTOP);
    const none = await call(bench.server, "GET", "/api/v1/guardrails", { key: org.key });
    assert.deepEqual(none.body.data, []);

    // Every other field set through its control: a region, a model from the catalog, a ZDR family,
    // a permission, a custom pattern and alert thresholds.
    await page.select("#reset_interval", "monthly");
    await page.click("#allowed_data_regions input[value='global']");
    await page.click("::-p-xpath(//summary[.='Allowed models'])");
    await page.type("#allowed_models-filter", "sonnet 4.5");
    await page.click("#allowed_models input[value='anthropic/claude-4.5-sonnet-20250929']");
    await page.click("#zdr-anthropic");
    await page.click("#enable_free_model_training");
    await page.$eval("#pattern-0", (el) => {
      (el as HTMLInputElement).value = "";
    });
    await page.type("#pattern-0", "ticket-[0-9]+");
    await page.type("#pattern-label-0", "[TICKET]");
    // Every field in error has been edited: no message is left, nor the summary above them.
    assert.equal(await page.$(".field-error"), null);
    assert.equal(await page.$("form > .error"), null);
    await shoot("guardrail-form");
    await clickButton("Save");
    await xpath("//td/a[.='pii']");
    const tbody = await text("tbody");
    assert.match(tbody, /email \(redact\)/);
    assert.doesNotMatch(await page.content(), /another organization/);
    const listed = await call(bench.server, "GET", "/api/v1/guardrails", { key: org.key });
    const pii = listed.body.data.find((g: { name: string }) => g.name === "pii");
    assert.equal(pii.limit_usd, 5);
    assert.equal(pii.reset_interval, "monthly");
    assert.deepEqual(pii.allowed_data_regions, ["global"]);
    assert.deepEqual(pii.allowed_models, ["anthropic/claude-4.5-sonnet-20250929"]);
    assert.equal(pii.enforce_zdr_anthropic, true);
    assert.equal(pii.enable_free_model_training, false);
    assert.deepEqual(pii.content_filters, [
      { pattern: "ticket-[0-9]+", action: "redact", label: "[TICKET]" },
    ]);
    assert.deepEqual(pii.alert_thresholds, [50, 90]);
    await shoot("guardrails");

    // A member, through the members page.
    await visit("/members", "Members");
    await page.type("#member-user-id", "ada");
    await page.type("#member-name", "Ada");
    await clickButton("Add member");
    await xpath("//td[.='ada']");

    // A new key's secret is shown once and works; after leaving the page it is gone.
    await visit("/keys", "Inference keys");
    await page.type("#key-name", "app");
    await clickButton("Create key");
    // Either the secret or a refusal appears; a refusal fails with its words rather than a time-out.
    await page.waitForFunction(
      () => document.querySelector("#new-secret") ?? document.querySelector("[role=alert], .field-error"),
      WAIT,
    );
    assert.ok(
      await page.$("#new-secret"),
      `the key was not created: ${await page.evaluate(() => [...document.querySelectorAll("[role=alert], .field-error")].map((e) => e.textContent).join(" | "))}`,
    );
    const secret = await text("#new-secret");
    assert.match(secret, /^sk-gr-v1-/);
    assert.equal((await call(bench.server, "GET", "/api/v1/key", { key: secret })).status, 200);
    await visit("/guardrails", "Guardrails");
    await visit("/keys", "Inference keys");
    await xpath("//td[.='app']");
    assert.equal(await page.$("#new-secret"), null);
    assert.equal((await page.content()).includes(secret), false);
    const keyHash = (await call(bench.server, "GET", "/api/v1/keys", { key: org.key })).body.data[0].hash;

    // Assigned in bulk from the assignments page: the key is then governed by pii.
    await visit("/assignments", "Assignments");
    await page.waitForSelector("input[aria-label='Pick app']", WAIT);
    await page.click("input[aria-label='Pick app']");
    await clickButton("Assign 1 key");
    await row("app", "yes");
    const assigned = await call(bench.server, "GET", `/api/v1/guardrails/${pii.id}/assignments/keys`, {
      key: org.key,
    });
    assert.deepEqual(
      assigned.body.data.map((a: { key_hash: string }) => a.key_hash),
      [keyHash],
    );
    await shoot("assignments");
    await visit("/keys", "Inference keys");
    await row("app", "pii");
    await shoot("keys");

    // The dry run shows the redaction the gateway would make, and where it would send the request.
    await visit("/try", "Try a request");
    await page.waitForSelector("#try-key option", WAIT);
    await page.select("#try-model", "anthropic/claude-sonnet-4.5");
    await page.type("#try-message", "Mail ada@example.com about ticket-42");
    await clickButton("Evaluate");
    await page.waitForSelector("#decision-redacted", WAIT);
    assert.equal(await text("#decision-verdict"), "Allowed");
    const redacted = await text("#decision-redacted");
    assert.equal(redacted, "user: Mail [EMAIL] about [TICKET]");
    assert.match(await text("#decision-endpoints"), /anthropic in global/);
    await shoot("try-a-request");

    // The same content refused by a model the guardrail does not allow: every reason is listed.
    await page.select("#try-model", "openai/gpt-5-mini");
    await clickButton("Evaluate");
    await page.waitForSelector("#decision-reasons", WAIT);
    assert.match(await text("#decision-verdict"), /^Refused \(403\)$/);

    // The same message as an embeddings request (docs/behaviour.md#console-try-api): the guardrail
    // allows no embedding model, and the input it would forward is redacted as the messages were.
    await page.select("#try-api", "embeddings");
    await page.waitForFunction(
      () =>
        (document.querySelector("#try-model") as HTMLSelectElement | null)?.value ===
        "openai/text-embedding-3-small",
      WAIT,
    );
    await clickButton("Evaluate");
    await page.waitForSelector("#decision-request", WAIT);
    assert.match(await text("#decision-verdict"), /^Refused \(403\)$/);
    assert.match(await text("#decision-reasons"), /model/i);
    assert.equal(await text("#decision-redacted"), "Mail [EMAIL] about [TICKET]");
    const asForwarded = JSON.parse(await text("#decision-request"));
    assert.deepEqual(asForwarded.input, "Mail [EMAIL] about [TICKET]");
    assert.equal("messages" in asForwarded, false);

    // A governed request through the API with the key: redacted on its way, and spent.
    const sent = await chat(bench.server, secret, ask("Mail ada@example.com"));
    assert.equal(sent.status, 200, sent.text);
    const forwarded = JSON.stringify(bench.received.at(-1)?.body);
    assert.doesNotMatch(forwarded, /ada@example\.com/);
    const today = new Date().toISOString().slice(0, 10);
    const usage = await call(bench.server, "GET", `/api/v1/usage?from=${today}&to=${today}&group_by=key`, {
      key: org.key,
    });
    const spent: number = usage.body.data[0].spend_usd;
    assert.ok(spent > 0, JSON.stringify(usage.body));

    // Its spend is on the chart, by key, with the same figure in the table beside it.
    await visit("/spend", "Spend");
    await xpath("//table[@id='spend-totals']//td[.='app']");
    await page.waitForSelector(".chart canvas", WAIT);
    const totals = await page.$eval("#spend-totals tbody tr", (tr) =>
      [...tr.cells].map((c) => c.textContent),
    );
    assert.equal(totals[0], "app");
    assert.equal(Number(totals[1]?.replace(/[$,]/g, "")), spent);
    await shoot("spend");
    // By API, the same spend is the chat API's (docs/behaviour.md#usage-by-api).
    await page.select("#spend-by", "api");
    await xpath("//table[@id='spend-totals']//td[.='chat']");
    const byApi = await page.$eval("#spend-totals tbody tr", (tr) => [...tr.cells].map((c) => c.textContent));
    assert.equal(Number(byApi[1]?.replace(/[$,]/g, "")), spent);

    // The audit log: each entry's change is a field-by-field before and after, readable at 1280 px
    // and at phone width (docs/behaviour.md#console-audit-entries). An update to read first.
    const raised = await call(bench.server, "PATCH", `/api/v1/guardrails/${pii.id}`, {
      key: org.key,
      body: { limit_usd: 12.5, content_filter_builtins: [{ slug: "email", action: "block" }] },
    });
    assert.equal(raised.status, 200, JSON.stringify(raised.body));
    await page.setViewport(WIDE);
    await visit("/audit", "Audit log");
    await page.waitForSelector(".audit-entry", WAIT);
    const update = await page.$$eval(".audit-entry", (entries) => {
      const entry = entries.find((e) => e.querySelector(".audit-action")?.textContent === "guardrail.update");
      return [...(entry?.querySelectorAll("table.change tbody tr") ?? [])].map((tr) =>
        [...tr.children].map((c) => c.textContent),
      );
    });
    assert.deepEqual(update, [
      ["Builtin filters", "email: redact", "email: block"],
      ["Budget limit", "$5.00", "$12.50"],
    ]);
    /** Every entry's height, and its change table's narrowest column and head, in px. */
    const auditLayout = () =>
      page.$$eval(".audit-entry", (entries) =>
        entries.map((entry) => {
          const cells = [...entry.querySelectorAll("table.change tbody th, table.change tbody td")];
          const heads = [...entry.querySelectorAll("table.change thead th")];
          return {
            action: entry.querySelector(".audit-action")?.textContent,
            height: entry.getBoundingClientRect().height,
            narrowest: Math.min(...cells.map((c) => c.getBoundingClientRect().width)),
            // A head squeezed to "Ch" is wider inside than its box.
            clipped: heads.filter((h) => h.scrollWidth > h.clientWidth).map((h) => h.textContent),
          };
        }),
      );
    const wide = await auditLayout();
    assert.ok(wide.length >= 4, JSON.stringify(wide));
    for (const e of wide) {
      assert.ok(e.height < 600, `${e.action} is ${e.height}px tall at 1280 px`);
      assert.ok(e.narrowest > 180, `${e.action}'s narrowest column is ${e.narrowest}px at 1280 px`);
      assert.deepEqual(e.clipped, [], `${e.action}`);
    }
    assert.ok(await noSidewaysScroll());
    await shoot("audit-log");
    await page.setViewport(PHONE);
    const phone = await auditLayout();
    for (const e of phone) {
      // At phone width each field's label, before and after take the entry's whole width.
      assert.ok(e.narrowest > 280, `${e.action}'s narrowest part is ${e.narrowest}px at 390 px`);
      assert.ok(e.height < 1400, `${e.action} is ${e.height}px tall at 390 px`);
    }
    assert.ok(await noSidewaysScroll());
    await shoot("audit-log-phone");
    await page.setViewport(DESKTOP);

    // Filtered to keys: the keys' creations (the assignment is a guardrail's).
    await page.select("#audit-type", "key");
    // The unfiltered list holds key.create too: wait for the filtered answer to replace it.
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll(".audit-entry .audit-action")];
      return cells.length > 0 && cells.every((el) => el.textContent?.startsWith("key."));
    }, WAIT);
    const actions = await page.$$eval(".audit-entry .audit-action", (els) => els.map((el) => el.textContent));
    // The new inference key's creation, and the organization's first management key's
    // (docs/behaviour.md#audit-log).
    assert.deepEqual(actions, ["key.create", "key.create"]);

    // A workspace's default guardrail does not exist until first saved; its form saves it by its id.
    await visit("/workspaces", "Workspaces");
    const edit = await xpath("//a[normalize-space(.)='Edit the default guardrail of Default']");
    await edit?.click();
    await xpath("//h1[.='Workspace default guardrail']");
    await page.select("#builtin-phone", "block");
    await clickButton("Save");
    await xpath("//h1[.='Assignments']");
    const spaces = await call(bench.server, "GET", "/api/v1/workspaces", { key: org.key });
    const fallback = await call(
      bench.server,
      "GET",
      `/api/v1/guardrails/${spaces.body.data[0].default_guardrail_id}`,
      { key: org.key },
    );
    assert.deepEqual(
      fallback.body.data.content_filter_builtins.map((f: { slug: string; action: string }) => [
        f.slug,
        f.action,
      ]),
      [["phone", "block"]],
    );

    // At phone width the page does not scroll sideways: wide tables scroll in their own box.
    await page.setViewport(PHONE);
    await visit("/keys", "Inference keys");
    await row("app", "pii");
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
    await shoot("keys-phone");
    await page.setViewport(DESKTOP);

    await clickButton("Revoke app");
    await xpath("//p[.='No inference keys yet.']");
    assert.equal((await call(bench.server, "GET", "/api/v1/key", { key: secret })).status, 401);

    // A write signed by this browser's cookie but sent from another origin is refused.
    const cookie = `gr_session=${session.value}`;
    const forged = await call(bench.server, "POST", "/api/v1/guardrails", {
      headers: { cookie, origin: "https://evil.example" },
      body: { name: "forged" },
    });
    assert.equal(forged.status, 403);

    await clickButton("Sign out");
    await page.waitForSelector("#management-key", WAIT);
    assert.equal(
      (await call(bench.server, "GET", "/api/v1/guardrails", { headers: { cookie } })).status,
      401,
    );
    // A console page opened without a session lands on the sign-in.
    await page.goto(`${bench.server.origin}/#/spend`);
    await page.waitForSelector("#management-key", WAIT);
  });

  it("on a fresh install, with no provider key, Try a request preselects a model the local provider serves and the dry run allows it, on chat and on embeddings picked in the API picker (docs/behaviour.md#console-try-model; docs/behaviour.md#console-try-api)", async () => {
    let fresh: TestServer | undefined;
    const context = await browser.createBrowserContext();
    try {
      fresh = await startTestServer({ consoleDir: join(dir, "console") });
      const admin = await fresh.newOrg();
      const created = await call(fresh, "POST", "/api/v1/keys", { key: admin.key, body: { name: "first" } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const models = (await call(fresh, "GET", "/api/v1/models")).body.data as {
        id: string;
        api?: string;
        endpoints: { provider: string; available: boolean }[];
      }[];
      // Chat is the API picked first: embedding models are not offered with it (docs/behaviour.md#console-try-api).
      const catalog = models.filter((m) => (m.api ?? "chat") === "chat");
      const embedding = models.filter((m) => m.api === "embeddings");
      assert.ok(embedding.length > 0, "the catalog has embedding models to leave out");
      const servedEmbedding = embedding.filter((m) => m.endpoints.some((e) => e.available)).map((m) => m.id);
      assert.deepEqual(servedEmbedding, ["openai/text-embedding-3-small"]);
      const served = catalog.filter((m) => m.endpoints.some((e) => e.available)).map((m) => m.id);
      assert.ok(served.includes("meta-llama/llama-3.1-8b-instruct"), served.join(", "));
      // The catalog's first model is one no configured provider serves: the old default.
      assert.ok(catalog[0] && !served.includes(catalog[0].id), catalog[0]?.id);

      const tab = await context.newPage();
      tab.setDefaultTimeout(WAIT.timeout);
      await tab.setViewport(DESKTOP);
      await tab.goto(`${fresh.origin}/#/try`);
      await tab.waitForSelector("#management-key", WAIT);
      await tab.type("#management-key", admin.key);
      await tab.click("button[type=submit]");
      await tab.waitForSelector("#try-model option", WAIT);
      await tab.waitForNetworkIdle({ idleTime: 250, timeout: WAIT.timeout });
      assert.equal(await tab.$eval("#try-api", (el) => (el as HTMLSelectElement).value), "chat");
      const picked = await tab.$eval("#try-model", (el) => (el as HTMLSelectElement).value);
      assert.ok(served.includes(picked), `${picked} is not served here`);
      const groups = () =>
        tab.$$eval("#try-model optgroup", (gs) =>
          gs.map((g) => [g.getAttribute("label"), g.children.length]),
        );
      const offered = () =>
        tab.$$eval("#try-model option", (os) => os.map((o) => (o as HTMLOptionElement).value).sort());
      assert.deepEqual(await groups(), [
        ["Served here", served.length],
        ["No provider configured here", catalog.length - served.length],
      ]);
      assert.deepEqual(await offered(), catalog.map((m) => m.id).sort());
      await tab.type("#try-message", "hello");
      await tab.click("button[type=submit]");
      await tab.waitForSelector("#decision-verdict", WAIT);
      assert.equal(await tab.$eval("#decision-verdict", (el) => el.textContent), "Allowed");
      assert.match(await tab.$eval("#decision-endpoints", (el) => el.textContent ?? ""), /local in global/);
      assert.equal(await tab.$eval("#decision-redacted", (el) => el.textContent), "user: hello");

      // Embeddings picked: only the embedding models, the served one preselected, and the dry run
      // shows the input as an embeddings request would forward it.
      await tab.select("#try-api", "embeddings");
      await tab.waitForFunction(
        (first) => (document.querySelector("#try-model") as HTMLSelectElement | null)?.value === first,
        WAIT,
        servedEmbedding[0],
      );
      assert.equal(await tab.$("#decision-verdict"), null, "the chat decision is gone with its API");
      assert.deepEqual(await offered(), embedding.map((m) => m.id).sort());
      assert.deepEqual(await groups(), [
        ["Served here", servedEmbedding.length],
        ["No provider configured here", embedding.length - servedEmbedding.length],
      ]);
      await tab.click("button[type=submit]");
      await tab.waitForSelector("#decision-request", WAIT);
      assert.equal(await tab.$eval("#decision-verdict", (el) => el.textContent), "Allowed");
      assert.equal(await tab.$eval("#decision-redacted", (el) => el.textContent), "hello");
      assert.match(await tab.$eval("#decision-endpoints", (el) => el.textContent ?? ""), /local in global/);
      const forwarded = JSON.parse(await tab.$eval("#decision-request", (el) => el.textContent ?? ""));
      assert.deepEqual(forwarded, { model: "openai/text-embedding-3-small", input: "hello" });

      // Responses picked: the chat models again, and the request as the Responses API forwards it,
      // with nothing stored (docs/gateway.md#responses-stateless).
      await tab.select("#try-api", "responses");
      await tab.waitForFunction(() => document.querySelector("#decision-verdict") === null, WAIT);
      await tab.click("button[type=submit]");
      await tab.waitForSelector("#decision-request", WAIT);
      assert.equal(await tab.$eval("#decision-verdict", (el) => el.textContent), "Allowed");
      assert.equal(await tab.$eval("#decision-redacted", (el) => el.textContent), "hello");
      const asResponse = JSON.parse(await tab.$eval("#decision-request", (el) => el.textContent ?? ""));
      assert.equal(asResponse.input, "hello");
      assert.equal(asResponse.store, false);
      assert.equal(asResponse.messages, undefined);

      // Anthropic Messages picked: the request as the Messages API forwards it, max_tokens included.
      await tab.select("#try-api", "messages");
      await tab.waitForFunction(() => document.querySelector("#decision-verdict") === null, WAIT);
      await tab.click("button[type=submit]");
      await tab.waitForSelector("#decision-request", WAIT);
      assert.equal(await tab.$eval("#decision-verdict", (el) => el.textContent), "Allowed");
      assert.equal(await tab.$eval("#decision-redacted", (el) => el.textContent), "user: hello");
      const asMessages = JSON.parse(await tab.$eval("#decision-request", (el) => el.textContent ?? ""));
      assert.deepEqual(asMessages.messages, [{ role: "user", content: "hello" }]);
      assert.equal(asMessages.max_tokens, 1024);
    } finally {
      await context.close();
      await fresh?.close();
    }
  });

  it("creates a guardrail whose filters read the model's answers through the form, sees apply_to stored through the API, and keeps it when the guardrail is edited (docs/behaviour.md#console-apply-to)", async () => {
    const admin = await bench.server.newOrg();
    // A context of its own: its session and its organization are this test's alone.
    const context = await browser.createBrowserContext();
    try {
      const tab = await context.newPage();
      tab.setDefaultTimeout(WAIT.timeout);
      await tab.setViewport(DESKTOP);
      const idle = () => tab.waitForNetworkIdle({ idleTime: 250, timeout: WAIT.timeout });
      const value = (selector: string) => tab.$eval(selector, (el) => (el as HTMLSelectElement).value);
      await tab.goto(`${bench.server.origin}/#/guardrails/new`);
      await tab.waitForSelector("#management-key", WAIT);
      await tab.type("#management-key", admin.key);
      await tab.click("button[type=submit]");
      await tab.waitForSelector("#builtin-email-response", WAIT);
      await idle();
      // Each builtin's two selects are named for a screen reader by what they act on.
      assert.equal(
        await tab.$eval("label[for='builtin-email-response']", (el) => el.textContent),
        "email on answers",
      );
      await tab.type("#name", "answers");
      await tab.select("#builtin-email", "redact");
      await tab.select("#builtin-email-response", "block");
      await tab.select("#builtin-ssn", "flag");
      await tab.select("#builtin-ssn-response", "flag");
      await tab.select("#builtin-secrets-response", "redact");
      await tab.click("::-p-xpath(//button[normalize-space(.)='Add pattern'])");
      await tab.waitForSelector("#pattern-apply-to-0", WAIT);
      assert.equal(await value("#pattern-apply-to-0"), "request");
      await tab.type("#pattern-0", "ticket-[0-9]+");
      await tab.select("#pattern-apply-to-0", "response");
      // The list after saving is read once, for the default workspace: not read unfiltered first
      // and then blanked while the picker chooses (docs/behaviour.md#console-workspace-lists).
      const listReads: string[] = [];
      tab.on("request", (r) => {
        const url = new URL(r.url());
        if (r.method() === "GET" && url.pathname === "/api/v1/guardrails") listReads.push(url.search);
      });
      await tab.click("::-p-xpath(//button[normalize-space(.)='Save'])");
      await tab.waitForSelector("::-p-xpath(//td/a[.='answers'])", WAIT);
      await idle();
      assert.equal(
        listReads.length,
        1,
        `the list was read ${listReads.length} times: ${listReads.join(" ")}`,
      );
      assert.match(listReads[0] ?? "", /workspace_id=/);
      assert.match(
        await tab.$eval("tbody", (el) => el.textContent ?? ""),
        /email \(redact\), email \(block on answers\), ssn \(flag on requests and answers\), secrets \(redact on answers\), \/ticket-\[0-9\]\+\/ \(redact on answers\)/,
      );

      const read = async () => {
        const listed = await call(bench.server, "GET", "/api/v1/guardrails", { key: admin.key });
        assert.equal(listed.status, 200);
        const g = listed.body.data.find((x: { name: string }) => x.name === "answers");
        assert.ok(g, "the guardrail is stored");
        return {
          id: g.id as string,
          builtins: (g.content_filter_builtins as { label?: string }[]).map(({ label: _, ...f }) => f),
          custom: g.content_filters,
        };
      };
      const created = await read();
      const expected = [
        { slug: "email", action: "redact" },
        { slug: "email", action: "block", apply_to: "response" },
        { slug: "ssn", action: "flag", apply_to: "both" },
        { slug: "secrets", action: "redact", apply_to: "response" },
      ];
      assert.deepEqual(created.builtins, expected);
      assert.deepEqual(created.custom, [
        { pattern: "ticket-[0-9]+", action: "redact", label: null, apply_to: "response" },
      ]);

      // The form reads every direction back; one more answer filter is added and the rest is kept.
      await tab.goto(`${bench.server.origin}/#/guardrails/${created.id}`);
      await tab.waitForSelector("#builtin-email-response", WAIT);
      await idle();
      assert.deepEqual(
        await Promise.all(
          [
            "#builtin-email",
            "#builtin-email-response",
            "#builtin-ssn",
            "#builtin-ssn-response",
            "#builtin-secrets",
            "#builtin-secrets-response",
            "#pattern-apply-to-0",
          ].map(value),
        ),
        ["redact", "block", "flag", "flag", "", "redact", "response"],
      );
      // Two selects per builtin, the longest name among them, still fit a phone's width.
      await tab.setViewport(PHONE);
      assert.ok(
        await tab.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
        "the form scrolls sideways at phone width",
      );
      await tab.setViewport(DESKTOP);
      await tab.select("#builtin-phone-response", "block");
      await tab.click("::-p-xpath(//button[normalize-space(.)='Save'])");
      await tab.waitForSelector("::-p-xpath(//td/a[.='answers'])", WAIT);
      const edited = await read();
      assert.equal(edited.id, created.id);
      assert.deepEqual(edited.builtins, [
        ...expected,
        { slug: "phone", action: "block", apply_to: "response" },
      ]);
      assert.deepEqual(edited.custom, created.custom);
    } finally {
      await context.close();
    }
  });

  it("lists the management keys on the Keys page, revokes another one after asking, signs out when revoking its own, and keeps the last one (docs/behaviour.md#management-key-revocation)", async () => {
    const made = async (name: string) =>
      (
        await createManagementKey(
          bench.server.deps,
          bench.server.deps.db,
          other.organizationId,
          name,
          "system",
        )
      ).secret;
    const laptop = await made("laptop");
    const spare = await made("spare");
    await page.goto(`${bench.server.origin}/#/keys`);
    await page.waitForSelector("#management-key", WAIT);
    await page.type("#management-key", laptop);
    await clickButton("Sign in");
    await xpath("//h2[.='Management keys']");
    await settled();
    await row("Initial management key");
    await row("laptop (signed in with)");
    await row("spare");
    assert.equal((await page.content()).includes(laptop), false, "no secret on the page");

    // Another key: revoked after the confirmation, gone from the list, refused by the API at once.
    await clickButton("Revoke management key Initial management key");
    await page.waitForFunction(
      () => ![...document.querySelectorAll("td")].some((td) => td.textContent === "Initial management key"),
      WAIT,
    );
    assert.equal((await call(bench.server, "GET", "/api/v1/guardrails", { key: other.key })).status, 401);

    // Its own key: the session ends with it, and the page is back at the sign-in.
    await clickButton("Revoke management key laptop");
    await page.waitForSelector("#management-key", WAIT);
    assert.equal((await call(bench.server, "GET", "/api/v1/guardrails", { key: laptop })).status, 401);

    // The last one left cannot be revoked from the page.
    await page.type("#management-key", spare);
    await clickButton("Sign in");
    await xpath("//h2[.='Management keys']");
    await settled();
    await row("spare (signed in with)");
    const disabled = await page.$eval(
      "::-p-xpath(//button[normalize-space(.)='Revoke management key spare'])",
      (b) => (b as HTMLButtonElement).disabled,
    );
    assert.equal(disabled, true);
    await shoot("management-keys");
    assert.equal((await call(bench.server, "GET", "/api/v1/guardrails", { key: spare })).status, 200);
  });
});
