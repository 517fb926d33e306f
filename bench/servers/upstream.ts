/** The bundled local upstream (an echo model) in its own process: the gateway bench's provider. */
import { startLocalUpstream } from "../../src/local-upstream/server.js";
import { serveChild } from "../shared.js";

const upstream = await startLocalUpstream({ port: 0 });
serveChild({ type: "ready", origin: upstream.url, key: null }, () => upstream.close());
