import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { StringDecoder } from "node:string_decoder";
import { describe, it } from "node:test";
import fc from "fast-check";

/**
 * The stream relay decodes the provider's bytes with Node's StringDecoder (src/gateway/complete.ts),
 * which costs a seventh of TextDecoder's streaming mode; it must give the text the WHATWG decoder
 * gives, whatever the bytes and wherever the reads split them (docs/gateway.md#streaming).
 */
describe("the stream relay's decoding (docs/gateway.md#streaming)", () => {
  it("gives TextDecoder's text for any bytes, invalid ones included, split anywhere", () => {
    // Bytes drawn to make UTF-8's edge cases common: ASCII, continuation bytes, lead bytes of every
    // length, and bytes no UTF-8 holds.
    const byte = fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }),
      fc.integer({ min: 0x80, max: 0xbf }),
      fc.integer({ min: 0xc0, max: 0xff }),
      fc.constantFrom(0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x8e, 0x89, 0xed, 0xa0),
    );
    fc.assert(
      fc.property(
        fc.array(byte, { maxLength: 48 }),
        fc.array(fc.nat({ max: 48 }), { maxLength: 5 }),
        (bytes, cuts) => {
          const data = Buffer.from(bytes);
          const at = [...new Set(cuts.map((c) => Math.min(c, data.length)))].sort((a, b) => a - b);
          const reads: Buffer[] = [];
          let from = 0;
          for (const cut of [...at, data.length]) {
            reads.push(data.subarray(from, cut));
            from = cut;
          }
          const whatwg = new TextDecoder("utf-8");
          const node = new StringDecoder("utf8");
          let expected = "";
          let actual = "";
          for (const read of reads) {
            expected += whatwg.decode(read, { stream: true });
            actual += node.write(read);
          }
          expected += whatwg.decode();
          actual += node.end();
          assert.equal(actual, expected);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
