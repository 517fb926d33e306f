import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { buildConsole } from "../../scripts/build-console.js";
import { call, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

/**
 * The console driven in a real browser (README.md#admin-console): Debian's Chromium, headless,
 * through puppeteer-core, which never downloads a browser of its own.
 */
const CHROMIUM = "/usr/bin/chromium";
const MISSING = `${CHROMIUM} is absent: the browser test of the console is skipped. Install it with: apt-get install -y chromium`;
if (!existsSync(CHROMIUM)) console.warn(`\n*** ${MISSING} ***\n`);

/** Every wait for the page has this bound, so a broken page fails the test instead of hanging it. */
const WAIT = { timeout: 15_000 };

describe("the admin console in Chromium (README.md#admin-console)", {
  skip: existsSync(CHROMIUM) ? false : MISSING,
}, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let org: TestOrg;
  const dir = mkdtempSync(join(tmpdir(), "guardrails-browser-"));

  before(async () => {
    await buildConsole(join(dir, "console"));
    server = await startTestServer({ consoleDir: join(dir, "console") });
    org = await server.newOrg();
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
    page.setDefaultTimeout(WAIT.timeout);
    // The console asks before deleting or revoking; the administrator says yes.
    page.on("dialog", (dialog) => void dialog.accept());
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? "");
  const clickButton = async (label: string) => {
    const button = await page.waitForSelector(`::-p-xpath(//button[normalize-space(.)="${label}"])`, WAIT);
    assert.ok(button, `a button "${label}"`);
    await button.click();
  };

  it("signs in, creates a guardrail after a validation error, creates and revokes a key whose secret shows once, and signs out (README.md#admin-console)", async () => {
    // Without a session, the console shows the sign-in.
    await page.goto(`${server.origin}/`);
    await page.waitForSelector("#management-key", WAIT);
    await page.type("#management-key", org.key);
    await clickButton("Sign in");
    await page.waitForSelector("::-p-xpath(//h1[.='Guardrails'])", WAIT);

    // Nothing secret is reachable by the page's script.
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0);
    assert.equal(await page.evaluate(() => document.cookie.includes("gr_session")), false);
    const cookies = await browser.cookies();
    const session = cookies.find((c) => c.name === "gr_session");
    assert.ok(session, "the session cookie is set");
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Strict");

    // A budget without its interval: the API's 400 is shown beside the interval's field.
    await page.click("a[href='#/guardrails/new']");
    await page.waitForSelector("#name", WAIT);
    await page.type("#name", "pii");
    await page.select("#builtin-email", "redact");
    await page.type("#limit_usd", "5");
    await clickButton("Save");
    await page.waitForSelector("#reset_interval-error", WAIT);
    assert.match(await text("#reset_interval-error"), /limit_usd/);
    assert.equal(await page.$eval("#reset_interval", (el) => el.getAttribute("aria-invalid")), "true");
    const stored = await call(server, "GET", "/api/v1/guardrails", { key: org.key });
    assert.equal(
      stored.body.data.some((g: { name: string }) => g.name === "pii"),
      false,
    );

    await page.select("#reset_interval", "monthly");
    await clickButton("Save");
    await page.waitForSelector("::-p-xpath(//td/a[.='pii'])", WAIT);
    assert.match(await page.$eval("tbody", (el) => el.textContent ?? ""), /email \(redact\)/);
    const created = await call(server, "GET", "/api/v1/guardrails", { key: org.key });
    const pii = created.body.data.find((g: { name: string }) => g.name === "pii");
    assert.equal(pii.limit_usd, 5);
    assert.equal(pii.reset_interval, "monthly");

    // A new key's secret is shown once and works; after leaving the page it is gone.
    await page.click("a[href='#/keys']");
    await page.waitForSelector("#key-name", WAIT);
    await page.type("#key-name", "app");
    await clickButton("Create key");
    await page.waitForSelector("#new-secret", WAIT);
    const secret = await text("#new-secret");
    assert.match(secret, /^sk-gr-v1-/);
    assert.equal((await call(server, "GET", "/api/v1/key", { key: secret })).status, 200);
    await page.click("a[href='#/guardrails']");
    await page.waitForSelector("::-p-xpath(//h1[.='Guardrails'])", WAIT);
    await page.click("a[href='#/keys']");
    await page.waitForSelector("::-p-xpath(//td[.='app'])", WAIT);
    assert.equal(await page.$("#new-secret"), null);
    assert.equal((await page.content()).includes(secret), false);

    await clickButton("Revoke app");
    await page.waitForSelector("::-p-xpath(//p[.='No inference keys yet.'])", WAIT);
    assert.equal((await call(server, "GET", "/api/v1/key", { key: secret })).status, 401);

    // A write signed by this browser's cookie but sent from another origin is refused.
    const cookie = `gr_session=${session.value}`;
    const forged = await call(server, "POST", "/api/v1/guardrails", {
      headers: { cookie, origin: "https://evil.example" },
      body: { name: "forged" },
    });
    assert.equal(forged.status, 403);

    await clickButton("Sign out");
    await page.waitForSelector("#management-key", WAIT);
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } })).status, 401);
    // A console page opened without a session lands on the sign-in.
    await page.goto(`${server.origin}/#/keys`);
    await page.waitForSelector("#management-key", WAIT);
  });
});
