import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, describe, type Session, whenSignedOut } from "./api.js";
import { GuardrailForm, GuardrailList } from "./guardrails.js";
import { KeyList } from "./keys.js";
import { go } from "./route.js";

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
  let page = <GuardrailList />;
  if (route === "/keys") page = <KeyList />;
  else if (route === "/guardrails/new") page = <GuardrailForm />;
  else if (route.startsWith("/guardrails/")) page = <GuardrailForm id={route.slice("/guardrails/".length)} />;
  return (
    <>
      <header>
        <nav aria-label="Console">
          <a href="#/guardrails" aria-current={route.startsWith("/guardrails") ? "page" : undefined}>
            Guardrails
          </a>
          <a href="#/keys" aria-current={route === "/keys" ? "page" : undefined}>
            Keys
          </a>
        </nav>
        <span class="who">
          {session.key_name} <code>{session.key_label}</code>
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>{page}</main>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
