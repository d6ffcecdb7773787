/**
 * renderJson and renderYaml write text straight from the messages; renderResult builds the JSON
 * value tree that `JSON.stringify` and the `yaml` package print. The two must agree byte for
 * byte. Compiled meshes only reach part of the schema and of the strings a user can put in a
 * mesh, so these resources are random: every field of a resource's type (and of the types under
 * it, Anys included) is set or not, with escapes, non-ASCII text, lone surrogates, YAML's special
 * words, defaults, unknown enum values, 64-bit integers, maps and Structs. Seeded: the same
 * resources every run.
 */
import { describe, expect, test, vi } from "vitest";
import { stringify } from "yaml";
import { mulberry32 } from "../../bench/workloads.js";
import type { Diagnostic } from "../../src/diagnostics.js";
import { renderJson, renderResult, renderYaml } from "../../src/emit/text.js";
import { TextBytes } from "../../src/emit/text-bytes.js";
import { blockYaml, YAML_OPTIONS } from "../../src/emit/yaml-text.js";
import { packEncoded, typeUrl } from "../../src/envoy/any.js";
import { enumValueNames, type FieldInfo, FieldType, lookupMessage } from "../../src/envoy/schema.js";

type Random = () => number;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Strings each printer treats specially somewhere: escapes, quoting, YAML's words and indicators, multi-line, non-ASCII. */
const STRINGS = [
  "",
  "plain",
  "svc-00001.ns-000.mesh.aether:8080",
  "10.0.0.1",
  "a b",
  "a: b",
  "a #b",
  "- x",
  "#x",
  "@x",
  "*.svc",
  "'q'",
  'say "hi"',
  "back\\slash",
  "tab\tx",
  "two\nlines",
  "line\n",
  "a\n\nb\n",
  "  indented\nfirst\n",
  "cr\rx",
  "\u0000nul\u001f",
  "\u007fdel",
  "\u0085next",
  "ü: x",
  "a → b",
  "→",
  "\u{1F600} emoji",
  "lone \ud800 high",
  "lone \udc00 low",
  "\ufffd replaced",
  "\uf8ff private use",
  "\u2028sep",
  "\ufeffbom",
  "true",
  "False",
  "null",
  "~",
  "yes",
  "8080",
  "007",
  "1e3",
  "1.5",
  ".inf",
  "-1",
  "0x1F",
  " lead",
  "trail ",
  "a:",
  "%x",
  "?x",
  "---",
  "x".repeat(130),
  "long words ".repeat(12),
];

/**
 * The strings random values are made of: all of STRINGS, or only those the YAML writer prints
 * itself (one line), so that a whole result is the writer's and not the package's.
 */
let strings: readonly string[] = STRINGS;
const ONE_LINE_STRINGS = STRINGS.filter((text) => !/[\n\r\u0085\u2028\u2029]/.test(text));

const NUMBERS = [0, 1, -1, 7, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1, 2 ** 53 - 1, 123_456_789_012];
const DOUBLES = [0, -0, 1.5, -2.25, 1e21, 1e-7, 0.1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 3];

/** Message types an Any may hold: ones a resource really carries, and small ones. */
const ANY_TYPES = [
  "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
  "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
  "envoy.extensions.filters.http.router.v3.Router",
  "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
  "envoy.config.core.v3.Address",
];

const MAX_DEPTH = 5;

function randomString(random: Random): string {
  const text = pick(random, strings);
  return random() < 0.2 ? `${text}${pick(random, strings)}` : text;
}

/** A value a Struct field may hold: plain JSON, sometimes empty collections. */
function randomJson(random: Random, depth: number): unknown {
  const roll = random();
  if (depth > 3 || roll < 0.4) return randomString(random);
  if (roll < 0.5) return pick(random, [...NUMBERS, 1.5, -0.5]);
  if (roll < 0.55) return random() < 0.5;
  if (roll < 0.6) return null;
  if (roll < 0.8) return Array.from({ length: Math.floor(random() * 3) }, () => randomJson(random, depth + 1));
  return randomObject(random, depth + 1);
}

function randomObject(random: Random, depth: number): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 4); i > 0; i--) object[randomString(random)] = randomJson(random, depth);
  return object;
}

function randomScalar(field: FieldInfo, random: Random): unknown {
  switch (field.type) {
    case FieldType.String:
      return randomString(random);
    case FieldType.Bool:
      return random() < 0.5;
    case FieldType.Double:
    case FieldType.Float:
      return pick(random, DOUBLES);
    case FieldType.Bytes:
      return Uint8Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * 256));
    case FieldType.Enum: {
      const known = [...(enumValueNames(field.typeName)?.keys() ?? [])];
      return random() < 0.85 && known.length > 0 ? pick(random, known) : 999;
    }
    case FieldType.Int32:
    case FieldType.Sint32:
    case FieldType.Sfixed32:
      return pick(random, [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 42]);
    case FieldType.Uint32:
    case FieldType.Fixed32:
      return pick(random, [0, 1, 2 ** 32 - 1, 8080]);
    default:
      return pick(random, NUMBERS);
  }
}

/**
 * The messages and Anys made for the result being built: the compiler shares message objects
 * between resources (and writers copy the text of one met again), so some values are reused —
 * at other depths, and a message as a field of another type too.
 */
let made: { messages: Record<string, unknown>[]; anys: unknown[] } = { messages: [], anys: [] };

function randomValue(field: FieldInfo, random: Random, depth: number, wire: boolean): unknown {
  if (field.type !== FieldType.Message) return randomScalar(field, random);
  switch (field.typeName) {
    case "google.protobuf.Any":
      if (made.anys.length > 0 && random() < 0.2) return pick(random, made.anys);
      return remembered(made.anys, randomAny(random, depth + 1));
    case "google.protobuf.Duration":
      return { seconds: pick(random, [0, 1, 30, 315_576_000_000]), nanos: pick(random, [0, 1, 500_000_000, 999_999_999]) };
    case "google.protobuf.Struct":
      return randomObject(random, 0);
    case "google.protobuf.Value":
      return randomJson(random, 0);
    case "google.protobuf.ListValue":
      return [randomJson(random, 1), randomJson(random, 1)];
    case "google.protobuf.BoolValue":
      return random() < 0.5;
    case "google.protobuf.StringValue":
      return randomString(random);
    case "google.protobuf.DoubleValue":
    case "google.protobuf.FloatValue":
      return pick(random, DOUBLES);
    case "google.protobuf.UInt32Value":
      return pick(random, [0, 1, 2 ** 32 - 1]);
    case "google.protobuf.Int32Value":
      return pick(random, [0, -1, 2 ** 31 - 1, -(2 ** 31)]);
    case "google.protobuf.UInt64Value":
      return pick(random, [0, 1, 2 ** 53 - 1]);
    case "google.protobuf.Int64Value":
      return pick(random, NUMBERS);
    default:
      // A message encoded into an Any keeps its own type: its fields must encode.
      if (!wire && made.messages.length > 0 && random() < 0.2) return pick(random, made.messages);
      return wire ? randomMessage(field.typeName, random, depth + 1, wire) : remembered(made.messages, randomMessage(field.typeName, random, depth + 1, wire));
  }
}

function remembered<T>(list: T[], value: T): T {
  list.push(value);
  return value;
}

/** A message of `typeName` with each field set with some chance; deeper messages have fewer fields. */
function randomMessage(typeName: string, random: Random, depth: number, wire: boolean): Record<string, unknown> {
  const message: Record<string, unknown> = {};
  if (depth > MAX_DEPTH) return message;
  const chance = 0.6 / depth;
  for (const field of lookupMessage(typeName)!.fields) {
    if (random() > chance) continue;
    const values = field.mapValue ?? field;
    if (field.mapValue) {
      const map: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 3); i > 0; i--) map[randomString(random)] = randomValue(values, random, depth, wire);
      message[field.name] = map;
    } else if (field.repeated) message[field.name] = Array.from({ length: Math.floor(random() * 3) }, () => randomValue(values, random, depth, wire));
    // An unset field is sometimes null in a hand-built message (never in one that is encoded for an Any).
    else message[field.name] = !wire && random() < 0.05 ? null : randomValue(values, random, depth, wire);
  }
  return message;
}

/** An Any packed from its message, or (as off the wire) only its bytes, decoded when rendered. */
function randomAny(random: Random, depth: number): unknown {
  const typeName = pick(random, ANY_TYPES);
  const message = randomMessage(typeName, random, depth, true);
  const bytes = lookupMessage(typeName)!.codec!.encode(message).finish();
  return random() < 0.5 ? packEncoded(typeName, bytes, message) : { type_url: typeUrl(typeName), value: bytes };
}

function randomDiagnostic(random: Random): Diagnostic {
  const message = randomString(random);
  // Compiles format most messages only when read (lazyDiagnostic): a getter the writers must call.
  const diagnostic: Record<string, unknown> =
    random() < 0.5
      ? { code: "ENDPOINT_DIRECT", severity: "info", message }
      : {
          code: "ENDPOINT_DIRECT",
          severity: "info",
          get message() {
            return message;
          },
        };
  if (random() < 0.5) diagnostic.endpoint = { cluster: randomString(random), ip: "10.0.0.1", pod: randomString(random) };
  if (random() < 0.3) diagnostic.priority = pick(random, [0, 1, 2.5]);
  if (random() < 0.2) diagnostic.details = randomObject(random, 0);
  return diagnostic as unknown as Diagnostic;
}

function randomResult(seed: number) {
  const random = mulberry32(seed);
  made = { messages: [], anys: [] };
  const resources = (typeName: string) => Array.from({ length: Math.floor(random() * 6) }, () => randomMessage(typeName, random, 1, false));
  return {
    clusters: resources("envoy.config.cluster.v3.Cluster"),
    endpoints: resources("envoy.config.endpoint.v3.ClusterLoadAssignment"),
    listeners: resources("envoy.config.listener.v3.Listener"),
    diagnostics: Array.from({ length: Math.floor(random() * 4) }, () => randomDiagnostic(random)),
  };
}

describe("renderJson and renderYaml print what JSON.stringify and the yaml package print of renderResult", () => {
  test.each(Array.from({ length: 40 }, (_, i) => i + 1))("random resources, seed %i", (seed) => {
    const result = randomResult(seed);
    const tree = renderResult(result);
    expect(renderJson(result)).toBe(`${JSON.stringify(tree, null, 2)}\n`);
    expect(renderYaml(result)).toBe(stringify(tree, YAML_OPTIONS));
  });
});

describe("renderYaml prints results of one-line strings as the yaml package does (the writer's own path)", () => {
  test.each(Array.from({ length: 40 }, (_, i) => i + 1))("random resources, seed %i", (seed) => {
    strings = ONE_LINE_STRINGS;
    try {
      const result = randomResult(seed);
      expect(renderYaml(result)).toBe(stringify(renderResult(result), YAML_OPTIONS));
    } finally {
      strings = STRINGS;
    }
  });
});

// Most random result sets hold a string only the package prints (a multi-line one), and then the
// whole text is the package's: these nested collections are printed by the writer itself.
describe("the YAML writer itself prints nested collections as the yaml package does", () => {
  const values: unknown[] = [
    { a: [["x", "y"], [{ k: 1 }]] },
    [[1, [2, 3]], [], [{}]],
    { a: { b: [{ c: [["d"]], e: "f" }] } },
    { empty: [[], {}], nested: [[[]]], deep: [[[["g"]]]] },
  ];
  test.each(values.map((value) => [value]))("%j", (value) => {
    const written = blockYaml(value);
    expect(written).toBeDefined();
    expect(written).toBe(stringify(value, YAML_OPTIONS));
  });
});

// Strings from 32 characters on take TextBytes' native path (Buffer's encoder, then a check of the
// bytes written); shorter ones its loop. Both must write what JSON.stringify and Buffer's UTF-8 encoder write.
describe("TextBytes writes short and long strings alike", () => {
  const pad = "p".repeat(40);
  const strings = STRINGS.flatMap((text) => [text, `${pad}${text}`, `${text}${pad}`, `${pad}${text}${pad}`]);
  test.each(strings.map((text) => [text]))("%j", (text) => {
    const json = new TextBytes();
    json.jsonString(text);
    expect(json.finish()).toBe(JSON.stringify(text));
    const plain = new TextBytes();
    plain.text(text);
    expect(plain.finish()).toBe(Buffer.from(text, "utf8").toString("utf8"));
  });
});

// A full node's text is tens of megabytes: a fresh buffer per render is that much new external
// memory, and V8 answers every 64 MB of it with a full GC. The next large render reuses the last
// one's buffer, and each text is only what its own render wrote.
describe("TextBytes reuses the last large buffer", () => {
  function written(text: string): string {
    const out = new TextBytes();
    out.text(text);
    return out.finish();
  }
  test("a second large text allocates no buffer of its size, and a shorter one after it ends where it ends", () => {
    const large = "a".repeat(3 << 20);
    written(large);
    const allocations = vi.spyOn(Buffer, "allocUnsafe");
    try {
      expect(written("b".repeat(3 << 20))).toBe("b".repeat(3 << 20));
      expect(written("c".repeat(2 << 20))).toBe("c".repeat(2 << 20));
      expect(allocations.mock.calls.filter(([size]) => size > 1 << 20)).toEqual([]);
    } finally {
      allocations.mockRestore();
    }
  });
});

// The YAML writer decides most strings' form itself (`valueForm`: a run of word characters by
// table, then the rest), the package the others. Every tricky string, alone and after a word, a
// dotted or numeric prefix, as a mapping value and as a sequence item.
describe("the YAML writer prints each string as the yaml package does", () => {
  const prefixes = ["", "word", "a.b.", "10.0.0.1", "1", "x_y-z/", "a:"];
  const strings = prefixes.flatMap((prefix) => STRINGS.map((text) => `${prefix}${text}`));
  test("as a value and as an item", () => {
    let written = 0;
    for (const text of strings) {
      for (const value of [{ key: text }, [text], { key: [text, { nested: text }] }]) {
        const yaml = blockYaml(value);
        if (yaml === undefined) continue;
        written++;
        expect(yaml, JSON.stringify(text)).toBe(stringify(value, YAML_OPTIONS));
      }
    }
    // Only multi-line strings that are not block scalars go to the package whole.
    expect(written).toBeGreaterThan(strings.length * 2);
  });
});

// Random short strings over an alphabet with a character of each kind `valueForm` tells apart
// (word, dot, digit, space, `#`, other printable, unsafe, non-ASCII), so every order of them meets
// the rules: as a value and as an item, the package's form.
describe("the YAML writer prints random strings as the yaml package does", () => {
  const alphabet = ["a", "Z", "_", "-", "/", ":", ".", "0", "9", " ", "#", ",", "(", "'", '"', "\\", "\t", "→", "ü", "\u0085", "\ud800", "@", "%", "?"];
  test.each([1, 2, 3, 4])("seed %i", (seed) => {
    const random = mulberry32(seed);
    let written = 0;
    for (let n = 0; n < 1500; n++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 8) }, () => pick(random, alphabet)).join("");
      for (const value of [{ key: text }, [text]]) {
        const yaml = blockYaml(value);
        if (yaml === undefined) continue;
        written++;
        expect(yaml, JSON.stringify(text)).toBe(stringify(value, YAML_OPTIONS));
      }
    }
    expect(written).toBe(3000);
  });
});

// The YAML writer copies a short leaf string it has printed before, per slot: a string after a
// key and the same one after a dash differ, and so does a block scalar at another indentation.
describe("renderYaml prints a repeated leaf string in each place as the yaml package does", () => {
  const texts = ["alpha", "a: b", "two\nlines", "true", "8080"];
  test.each(texts.map((text) => [text]))("%j", (text) => {
    const listener = {
      name: text,
      filter_chains: [{ filter_chain_match: { transport_protocol: text, server_names: [text, "beta", text], application_protocols: [text] } }],
    };
    const result = { clusters: [{ name: text, alt_stat_name: text }], endpoints: [], listeners: [listener, { ...listener, name: "second" }], diagnostics: [] };
    expect(renderYaml(result)).toBe(stringify(renderResult(result), YAML_OPTIONS));
  });
});

// The YAML writer copies a plain object's `key: value` entry it has printed before, per key and
// place: an item's first entry sits on the dash's line (a later one is indented), and a block
// scalar's lines are indented by where its key is, so the same entry elsewhere prints otherwise.
describe("renderYaml prints a repeated entry of plain objects (diagnostics) in each place as the yaml package does", () => {
  const texts = ["alpha", "a: b", "two\nlines", "line\n", "true", "8080"];
  test.each(texts.map((text) => [text]))("%j", (text) => {
    const diagnostics = [
      { code: text, message: "m", endpoint: { cluster: text, pod: text } },
      { code: text, message: text, endpoint: { pod: "p", cluster: text } },
      { message: "m", code: text },
      { list: [{ code: text }, [{ code: text, cluster: text }], [[{ code: text }]]] },
    ];
    const result = { clusters: [], endpoints: [], listeners: [], diagnostics: diagnostics as never[] };
    expect(renderYaml(result)).toBe(stringify(renderResult(result), YAML_OPTIONS));
  });
});

// The writers copy the text of a message object met again at the same place. One predicate object
// here is an item of a list (after a dash) and, as deep, a field's value (after a key): in YAML
// the two places have the same indentation and different text.
describe("a message object printed in two places prints as the yaml package and JSON.stringify print it", () => {
  const shared = { single_predicate: { input: { name: "shared" } } };
  const predicate = { or_matcher: { predicate: [shared, shared] }, not_matcher: { not_matcher: { not_matcher: shared } } };
  const cluster = { name: "c", transport_socket_matcher: { matcher_list: { matchers: [{ predicate }, { predicate }] } } };
  const result = { clusters: [cluster, { ...cluster, name: "d" }], endpoints: [], listeners: [], diagnostics: [] };

  test("renderYaml", () => {
    expect(renderYaml(result)).toBe(stringify(renderResult(result), YAML_OPTIONS));
  });

  test("renderJson", () => {
    expect(renderJson(result)).toBe(`${JSON.stringify(renderResult(result), null, 2)}\n`);
  });
});
