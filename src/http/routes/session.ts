import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import {
  endSession,
  isKnownManagementKey,
  SESSION_TTL_SECONDS,
  sessionKey,
  startSession,
} from "../../services/sessions.js";
import { type AuthFailures, principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import {
  cameOverHttps,
  checkSameOrigin,
  clearedSessionCookie,
  sessionCookie,
  sessionTokenOf,
} from "../session-cookie.js";

const SignInBody = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 512,
      description: "A management key's secret; exchanged for the session and not kept.",
    }),
  },
  { additionalProperties: false },
);
const Session = Type.Object({
  data: Type.Object({
    organization_id: Type.String(),
    key_name: Type.String({ description: "The name of the management key the session came from." }),
    key_label: Type.String(),
    expires_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When the session ends; null when the request was signed in by a key, not a session.",
    }),
  }),
});

/**
 * The console's sign-in (docs/api.md#console-sessions): a pasted management key exchanged for an
 * HttpOnly cookie, so the page's script never holds anything secret.
 */
export function sessionRoutes(
  parent: FastifyInstance,
  deps: ServiceDeps,
  trustProxy: boolean,
  failures: AuthFailures,
): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Console sessions"];

  app.post(
    "/api/v1/session",
    {
      schema: {
        tags,
        summary: "Sign in to the console with a management key",
        description:
          "Answers the session in an HttpOnly, SameSite=Strict cookie (Secure over HTTPS). A browser's sign-in must come from this service's own origin.",
        security: [],
        body: SignInBody,
        response: { 201: Session, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      // A forged sign-in would put the victim's browser in the attacker's organization; a request
      // without Origin (curl, a script) is not a browser's and carries the key itself.
      if (request.headers.origin !== undefined) checkSameOrigin(request, trustProxy);
      // Guessing keys here counts as it does on the API (docs/behaviour.md#sign-in-throttle): past
      // the limit, only a key already known valid is still exchanged.
      const nowMs = deps.now().getTime();
      if (!isKnownManagementKey(deps, request.body.key)) {
        const refused = failures.refusal(request, reply, nowMs);
        if (refused) throw refused;
      }
      let started: Awaited<ReturnType<typeof startSession>>;
      try {
        started = await startSession(deps, request.body.key);
      } catch (err) {
        failures.recordIfFailed(request, err, nowMs);
        throw err;
      }
      const { token, record } = started;
      const key = await sessionKey(deps, record.key_hash);
      reply.header(
        "set-cookie",
        sessionCookie(token, SESSION_TTL_SECONDS, cameOverHttps(request, trustProxy)),
      );
      reply.header("cache-control", "no-store");
      return reply.code(201).send({
        data: {
          organization_id: record.organization_id,
          key_name: key?.name ?? "",
          key_label: key?.label ?? "",
          expires_at: record.expires_at,
        },
      });
    },
  );

  app.get(
    "/api/v1/session",
    {
      config: { auth: "management" },
      schema: {
        tags,
        summary: "Who is signed in",
        description: "The organization and management key behind the session cookie (or Bearer key).",
        response: { 200: Session, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const key = await sessionKey(deps, principal.keyHash);
      return {
        data: {
          organization_id: principal.organizationId,
          key_name: key?.name ?? "",
          key_label: key?.label ?? "",
          expires_at: request.session?.expires_at ?? null,
        },
      };
    },
  );

  app.delete(
    "/api/v1/session",
    {
      config: { auth: "management" },
      schema: {
        tags,
        summary: "Sign out",
        description:
          "Ends the session on the server, so its cookie opens nothing on any instance, and clears the cookie.",
        response: { 204: Type.Null({ description: "Signed out." }), ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const token = request.session ? sessionTokenOf(request) : undefined;
      if (token !== undefined) await endSession(deps, token);
      reply.header("set-cookie", clearedSessionCookie(cameOverHttps(request, trustProxy)));
      return reply.code(204).send(null);
    },
  );
}
