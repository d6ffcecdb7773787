/**
 * Diagnostics: how the compiler accounts for every endpoint and every input it could not use.
 * Codes are stable; match on `code`, never on `message`.
 */

/** Every diagnostic code, with its severity. Codes are stable: match on them, never on messages. */
export const DIAGNOSTIC_CODES = {
  // Emitted endpoints: where each one went.
  ENDPOINT_DIRECT: "info",
  ENDPOINT_VIA_WAYPOINT: "info",
  // Endpoints left out of an assignment.
  UNKNOWN_NODE: "warning",
  NO_NODE_IP: "warning",
  NODE_NOT_READY: "warning",
  NODE_GONE: "warning",
  NOT_EXPORTED: "info",
  ADDRESS_CONFLICT: "warning",
  NO_NETNS: "warning",
  NETNS_SHARED: "warning",
  // Endpoints emitted that cannot work as the mesh describes it.
  POD_IP_NOT_ROUTABLE: "warning",
  SHARED_POD_ADDRESS: "warning",
  // Endpoints emitted with an adjustment.
  NODE_IP_MISMATCH: "warning",
  RESERVED_METADATA_KEY: "warning",
  WEIGHTS_SCALED: "info",
  // Clusters.
  EMPTY_ASSIGNMENT: "info",
  DEPENDENCY_WITHOUT_PORTS: "warning",
  // Hosted pods.
  POD_WITHOUT_NETNS: "warning",
  NETNS_CONFLICT: "warning",
  POD_WITHOUT_PORTS: "warning",
  POD_TERMINATING: "info",
} as const;

/** A stable diagnostic code, e.g. `"NO_NODE_IP"`. */
export type DiagnosticCode = keyof typeof DIAGNOSTIC_CODES;

/** Codes of endpoints that were visible to the node and not emitted. */
export const LEFT_OUT_CODES: ReadonlySet<DiagnosticCode> = new Set([
  "UNKNOWN_NODE",
  "NO_NODE_IP",
  "NODE_NOT_READY",
  "NODE_GONE",
  "NOT_EXPORTED",
  "ADDRESS_CONFLICT",
  "NO_NETNS",
  "NETNS_SHARED",
]);
/** `info` for what the compiler did as designed, `warning` for input it could not use as given. */
export type Severity = (typeof DIAGNOSTIC_CODES)[DiagnosticCode];

/** The registry endpoint a diagnostic is about. */
export interface EndpointRef {
  readonly cluster: string;
  readonly ip: string;
  readonly pod?: string;
  readonly node?: string;
}

/**
 * What the compiler did with one endpoint or input: where an endpoint went, or why it was left
 * out. `message` is for people; the other fields are for code.
 */
export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  /** A sentence for people; its wording may change between releases. */
  readonly message: string;
  /** The Envoy resource concerned: an outbound cluster, a listener, ... */
  readonly resource?: string;
  /** The registry service, `"<ns>/<svc>"`. */
  readonly service?: string;
  readonly endpoint?: EndpointRef;
  /** For emitted endpoints: the priority and the address Envoy dials. */
  readonly priority?: number;
  readonly address?: string;
  /** For endpoints routed through a waypoint: that node, `"<cluster>/<node>"`. */
  readonly via?: string;
}

export function diagnostic(code: DiagnosticCode, message: string, fields: Omit<Diagnostic, "code" | "severity" | "message"> = {}): Diagnostic {
  return { code, severity: DIAGNOSTIC_CODES[code], message, ...fields };
}

/**
 * A diagnostic whose message is formatted only when read: compiles emit one per endpoint, and
 * most are never looked at. JSON and YAML renderings read it like any property.
 *
 * Built step by step rather than as a literal with a getter (which V8 keeps in dictionary mode,
 * slow to walk): every such diagnostic with the same fields shares one fast shape. `message` is
 * an own enumerable accessor, third as before; the formatter hides in a non-enumerable symbol slot
 * that keys, spreads and JSON never see.
 */
export function lazyDiagnostic(code: DiagnosticCode, describe: () => string, fields: Omit<Diagnostic, "code" | "severity" | "message"> = {}): Diagnostic {
  const lazy = { code, severity: DIAGNOSTIC_CODES[code] };
  Object.defineProperty(lazy, "message", LAZY_MESSAGE);
  Object.defineProperty(lazy, DESCRIBE, { value: describe });
  return Object.assign(lazy, fields) as Diagnostic;
}

const DESCRIBE = Symbol("describe");
/** One accessor for every lazy diagnostic (one getter function keeps their shape shared). */
const LAZY_MESSAGE: PropertyDescriptor = {
  get(this: { [DESCRIBE]: () => string }) {
    return this[DESCRIBE]();
  },
  enumerable: true,
  configurable: true,
};
