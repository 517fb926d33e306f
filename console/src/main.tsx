import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, describe, type Session, whenSignedOut } from "./api.js";
import { Assignments } from "./assignments.js";
import { AuditLog } from "./audit.js";
import { GuardrailForm, GuardrailList } from "./guardrails.js";
import { KeyList } from "./keys.js";
import { MemberList, WorkspaceList } from "./people.js";
import { go } from "./route.js";
import { SpendPage } from "./spend.js";
import { TryRequest } from "./try.js";
import { ErrorText, useWorkspaces } from "./ui.js";

const PAGES: [route: string, title: string][] = [
  ["/guardrails", "Guardrails"],
  ["/assignments", "Assignments"],
  ["/keys", "Keys"],
  ["/members", "Members"],
  ["/workspaces", "Workspaces"],
  ["/try", "Try a request"],
  ["/spend", "Spend"],
  ["/audit", "Audit log"],
];

/** A workspace's default guardrail is edited by its well-known id, found on the workspace. */
function WorkspaceDefault({ workspaceId }: { workspaceId: string }) {
  const spaces = useWorkspaces();
  if (!spaces) return <p class="loading">Loading…</p>;
  const w = spaces.find((s) => s.id === workspaceId);
  if (!w) return <ErrorText message="This workspace does not exist (any more)." />;
  return <GuardrailForm id={w.default_guardrail_id} isDefault />;
}

function pageFor(route: string) {
  const [path = "", search = ""] = route.split("?");
  const params = new URLSearchParams(search);
  if (path === "/guardrails/new") return <GuardrailForm workspace={params.get("workspace") ?? undefined} />;
  if (path.startsWith("/guardrails/")) return <GuardrailForm id={path.slice("/guardrails/".length)} />;
  if (path.startsWith("/workspace-default/"))
    return <WorkspaceDefault workspaceId={path.slice("/workspace-default/".length)} />;
  switch (path) {
    case "/assignments":
      return <Assignments />;
    case "/keys":
      return <KeyList />;
    case "/members":
      return <MemberList />;
    case "/workspaces":
      return <WorkspaceList />;
    case "/try":
      return <TryRequest />;
    case "/spend":
      return <SpendPage />;
    case "/audit":
      return <AuditLog />;
    default:
      return <GuardrailList />;
  }
}

/** Pages are addressed by the URL's fragment, so the service serves one document at `/`. */
function useRoute(): string {
  const [route, setRoute] = useState(location.hash.slice(1) || "/guardrails");
  useEffect(() => {
    const changed = () => setRoute(location.hash.slice(1) || "/guardrails");
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError("");
    try {
      const { data } = await api<{ data: Session }>("POST", "/session", { key: key.trim() });
      // The key leaves the page's memory as soon as it has been exchanged.
      setKey("");
      onSignedIn(data);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Guardrails console</h1>
      <form onSubmit={submit}>
        <label for="management-key">Management key</label>
        <input
          id="management-key"
          type="password"
          autocomplete="off"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <p class="hint">Exchanged once for a session; the key is not kept in this browser.</p>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}

/** The fragment holds the page, so skipping moves focus instead of navigating. */
function skipToContent() {
  document.getElementById("content")?.focus();
}

function App() {
  const route = useRoute();
  // undefined: not known yet; null: signed out.
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    api<{ data: Session }>("GET", "/session").then(
      ({ data }) => setSession(data),
      () => setSession(null),
    );
  }, []);
  // Keyboard and screen reader users land on the new page's content, not on the link they left.
  useEffect(() => {
    if (session) document.getElementById("content")?.focus();
  }, [route]);
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  const signOut = async () => {
    try {
      await api("DELETE", "/session");
    } finally {
      setSession(null);
      go("/guardrails");
    }
  };
  const current = PAGES.find(([r]) => route === r || route.startsWith(`${r}/`) || route.startsWith(`${r}?`));
  return (
    <>
      <button type="button" class="skip" onClick={skipToContent}>
        Skip to content
      </button>
      <header>
        <nav aria-label="Console">
          {PAGES.map(([r, title]) => (
            <a href={`#${r}`} key={r} aria-current={current?.[0] === r ? "page" : undefined}>
              {title}
            </a>
          ))}
        </nav>
        <span class="who">
          {session.key_name} <code>{session.key_label}</code>
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      {/* Keyed by route: every page starts fresh, as if loaded on its own. */}
      <main id="content" tabIndex={-1} key={route}>
        {pageFor(route)}
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
