/** The service under test for create and update (bench/run.ts), booted by ./boot.ts. */
import { service as load } from "../build.js";
import { serveChild } from "../shared.js";
import { bootService } from "./boot.js";

const { DEFAULT_CONFIG_FILE, loadCatalogFile } =
  await load<typeof import("../../src/config.js")>("config.js");
const { createOrganization } =
  await load<typeof import("../../src/services/organizations.js")>("services/organizations.js");

const service = await bootService(loadCatalogFile(DEFAULT_CONFIG_FILE), {});
const org = await createOrganization(service.deps, "bench organization");
const origin = await service.app.listen({ port: 0, host: "127.0.0.1" });

serveChild({ type: "ready", origin, key: org.key.secret }, () => service.close());
