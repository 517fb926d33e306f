import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { validate, version } from "uuid";
import { isUuid, newId, workspaceDefaultGuardrailId } from "../../src/domain/ids.js";

describe("ids are UUIDs (docs/behaviour.md#money-and-ids)", () => {
  it("new ids are valid version-7 UUIDs whose first 48 bits are the creation time in milliseconds", () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, () => newId());
    const after = Date.now();
    for (const id of ids) {
      assert.ok(validate(id) && isUuid(id), id);
      assert.equal(version(id), 7, id);
      assert.match(id[19] ?? "", /[89ab]/, `variant of ${id}`);
      const ms = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
      assert.ok(ms >= before && ms <= after, id);
    }
    assert.equal(new Set(ids).size, ids.length, "no two ids alike");
  });

  it("ids made in later milliseconds sort after earlier ones (new rows append to the index)", async () => {
    const first = newId();
    await new Promise((resolve) => setTimeout(resolve, 3));
    assert.ok(newId() > first);
  });

  it("a workspace's default guardrail id is a UUIDv5 derived from the workspace id, the same every time (docs/behaviour.md#workspace-default)", () => {
    const ws = newId();
    assert.equal(workspaceDefaultGuardrailId(ws), workspaceDefaultGuardrailId(ws));
    assert.equal(version(workspaceDefaultGuardrailId(ws)), 5);
    assert.notEqual(workspaceDefaultGuardrailId(ws), workspaceDefaultGuardrailId(newId()));
  });
});
