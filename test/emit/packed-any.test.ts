/**
 * `pack` keeps the original message on the Any it returns, so renderers, lint and the mesh check
 * read it without decoding; users see only `type_url` and `value`, as in any other Any.
 */
import { describe, expect, test } from "vitest";
import { type MessageType, pack, packedMessage, packInterim, typeUrl } from "../../src/envoy/any.js";
import { lookupMessage, unpackAny } from "../../src/envoy/schema.js";
import * as TYPES from "../../src/envoy/types.js";
import { TRANSPORT_SOCKET_NAME_ACTION } from "../../src/envoy/types.js";

describe("a packed Any", () => {
  const message = { name: "waypoint" };
  const any = pack(TRANSPORT_SOCKET_NAME_ACTION, message);

  // An interim one (bytes that its resource's encoding takes over) carries one more hidden slot.
  test.each([
    ["packed", any],
    ["packed interim", packInterim(TRANSPORT_SOCKET_NAME_ACTION, message)],
  ])("shows only type_url and value: keys, spreads, JSON and equality (%s)", (_, packed) => {
    const plain = { type_url: typeUrl(TRANSPORT_SOCKET_NAME_ACTION.typeName), value: packed.value };
    expect(Object.keys(packed)).toEqual(["type_url", "value"]);
    expect(Reflect.ownKeys({ ...packed })).toEqual(["type_url", "value"]);
    expect(JSON.stringify(packed)).toBe(JSON.stringify(plain));
    expect(packed).toStrictEqual(plain);
  });

  test("gives back the very message it was packed from", () => {
    expect(packedMessage(any)).toBe(message);
    expect(unpackAny(any)?.message).toBe(message);
  });

  test("a copy carries no message: unpacking decodes its bytes to an equal one", () => {
    const copy = { ...any };
    expect(packedMessage(copy)).toBeUndefined();
    const unpacked = unpackAny(copy);
    expect(unpacked?.typeName).toBe(TRANSPORT_SOCKET_NAME_ACTION.typeName);
    expect(unpacked?.message).not.toBe(message);
    expect(unpacked?.message).toEqual(message);
  });
});

describe("the schema registry", () => {
  // What lets a resource without packed messages (decoded, copied) be unpacked and rendered.
  test("has a codec for every message type the compiler packs", () => {
    const packed = Object.entries(TYPES).filter((entry): entry is [string, MessageType<unknown>] => {
      const value = entry[1] as Partial<MessageType<unknown>>;
      return typeof value === "object" && typeof value.typeName === "string" && typeof value.encode === "function";
    });
    expect(packed.length).toBeGreaterThan(15);
    for (const [name, type] of packed) expect(lookupMessage(type.typeName)?.codec, `${name}: ${type.typeName}`).toBeDefined();
  });
});
