import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { buildConsole } from "../../scripts/build-console.js";
import { createManagementKey } from "../../src/services/keys.js";
import { call, type TestOrg } from "../helpers/server.js";
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

    // A budget without its interval: the API's 400 is shown beside the interval's field, nothing stored.
    await page.click("a[href^='#/guardrails/new']");
    await page.waitForSelector("#name", WAIT);
    await page.type("#name", "pii");
    await page.select("#builtin-email", "redact");
    await page.type("#limit_usd", "5");
    await clickButton("Save");
    await page.waitForSelector("#reset_interval-error", WAIT);
    assert.match(await text("#reset_interval-error"), /limit_usd/);
    assert.equal(await page.$eval("#reset_interval", (el) => el.getAttribute("aria-invalid")), "true");
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
    await clickButton("Add pattern");
    await page.type("#pattern-0", "ticket-[0-9]+");
    await page.type("#pattern-label-0", "[TICKET]");
    await page.type("#alert_thresholds", "50, 90");
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

    // The audit log filtered to keys: the key's creation and the assignment is a guardrail's.
    await visit("/audit", "Audit log");
    await page.select("#audit-type", "key");
    // The unfiltered list holds key.create too: wait for the filtered answer to replace it.
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll("tbody tr td:nth-child(2)")];
      return cells.length > 0 && cells.every((td) => td.textContent?.startsWith("key."));
    }, WAIT);
    const actions = await page.$$eval("tbody tr td:nth-child(2)", (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(actions, ["key.create"]);
    await shoot("audit-log");

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

  it("lists the management keys on the Keys page, revokes another one after asking, signs out when revoking its own, and keeps the last one (docs/behaviour.md#management-key-revocation)", async () => {
    const made = async (name: string) =>
      (await createManagementKey(bench.server.deps, bench.server.deps.db, other.organizationId, name)).secret;
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
