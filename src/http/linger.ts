import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";

/** How much of an unread body is read and thrown away after an early answer, at most. */
export const LINGER_BYTES = 64 * 1024 * 1024;
/** How long a connection stays open after an early answer for the client to finish sending. */
export const LINGER_MS = 10_000;

/**
 * A lingering close. When an answer (a 413, or a 401 before the body was read) goes out while the
 * client is still sending its body, closing the socket at once makes the kernel reset the
 * connection: a client that writes the whole body before it reads (Node's fetch, Python's
 * http.client) then gets EPIPE or ECONNRESET instead of the answer. So the answer is followed by a
 * half-close, and what the client still sends is read and discarded, up to LINGER_BYTES and
 * LINGER_MS, before the socket closes.
 */
export function installLingeringClose(app: FastifyInstance): void {
  app.addHook("onSend", (request, reply, payload, done) => {
    // Checked on the request's headers too: an answer given in the same turn as the request arrived
    // (a 401 from onRequest) sees even a bodiless GET as not yet complete.
    if (!request.raw.complete && mayHaveBody(request.raw)) linger(request.raw, reply.raw);
    done(null, payload);
  });
}

const ANSWERED_EARLY = Symbol("answered before its request arrived");

/**
 * Whether the request now arriving on this socket was already answered (an early answer, above).
 * Its time-out then writes nothing more: a second answer to one request would be read as the answer
 * to the client's next one (docs/gateway.md#receive-timeout).
 */
export function answeredEarly(socket: Socket): boolean {
  return (socket as Socket & { [ANSWERED_EARLY]?: boolean })[ANSWERED_EARLY] === true;
}

/** A request without a declared length or chunked framing has no body to wait for. */
function mayHaveBody(request: IncomingMessage): boolean {
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

function linger(request: IncomingMessage, response: ServerResponse): void {
  const socket = request.socket as Socket & { destroySoon?: () => void; [ANSWERED_EARLY]?: boolean };
  socket[ANSWERED_EARLY] = true;
  request.once("end", () => {
    socket[ANSWERED_EARLY] = false;
  });
  // Node closes a connection it will not keep alive with destroySoon: end, then destroy as soon as
  // the answer is written. Only the end is kept here; the destroy waits for the body to be read.
  socket.destroySoon = () => socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  // Everything added to the socket is taken off again once the body is read: a keep-alive
  // connection carries many early answers, and each would otherwise leave a listener behind
  // (docs/behaviour.md#keep-alive-connections).
  const done = () => {
    clearTimeout(timer);
    socket.removeListener("close", done);
  };
  socket.once("close", done);
  response.once("finish", () => {
    // Node drops the body's data listeners once the answer is sent; count what still arrives.
    let discarded = 0;
    request.on("data", (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES) socket.destroy();
    });
    request.once("end", () => {
      done();
      if (!response.shouldKeepAlive) socket.destroy();
      // The connection goes on to its next request, which closes the way Node closes any.
      // (The own property set above goes; the prototype's method shows through again.)
      else Reflect.deleteProperty(socket, "destroySoon");
    });
  });
}
