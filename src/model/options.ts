/** Compile options (docs/contract.md, "Options") with their defaults. */
import { z } from "zod";
import { InputError } from "../errors.js";
import { clusterName, port } from "./fields.js";
import { collectIssues, unsafeInputIssues } from "./issues.js";

/** Where Envoy fetches EDS or SDS resources: the ADS stream, or a named gRPC cluster. */
const configSource = z.union([z.literal("ads"), z.strictObject({ grpcCluster: clusterName })]);
export type ConfigSourceOption = z.output<typeof configSource>;

export const WAYPOINT_MODES = ["off", "cross-cluster", "always"] as const;
export type WaypointMode = (typeof WAYPOINT_MODES)[number];
export const SOCKET_SELECTIONS = ["matcher", "aggregate"] as const;
export type SocketSelection = (typeof SOCKET_SELECTIONS)[number];

const options = z.strictObject({
  /** Which endpoints are dialed through their node's waypoint. */
  eastWestWaypoint: z.enum(WAYPOINT_MODES).default("off"),
  /** The pod inbound mTLS port. */
  inboundPort: port.default(15008),
  /** The node tunnel listener's port. */
  tunnelPort: port.default(15009),
  /** One cluster with a two-level transport-socket matcher, or the aggregate-cluster fallback. */
  socketSelection: z.enum(SOCKET_SELECTIONS).default("matcher"),
  /** Filter-state key carrying the source pod's network namespace path. */
  netnsFilterStateKey: z.string().min(1).max(256).default("envoy.network.network_namespace"),
  /** Source of SDS secrets (SVIDs and CA bundles). */
  sds: configSource.default("ads"),
  /** Source of the outbound clusters' EDS. */
  eds: configSource.default("ads"),
});

/** Compile options as callers give them: every field is optional (see `Options` for the defaults). */
export type OptionsInput = z.input<typeof options>;
/** Compile options, validated, every default filled in. */
export type Options = z.output<typeof options>;

/** Options already validated, by the object passed in. */
const parsedOptions = new WeakMap<object, Options>();

/**
 * Validates compile options and fills in the defaults, or throws one `InputError` listing every
 * problem. The same object passed again is not validated again.
 */
export function parseOptions(input: unknown = {}): Options {
  const known = typeof input === "object" && input !== null ? parsedOptions.get(input) : undefined;
  if (known) return known;
  const options = validateOptions(input);
  if (typeof input === "object" && input !== null) parsedOptions.set(input, options);
  parsedOptions.set(options, options);
  return options;
}

function validateOptions(input: unknown = {}): Options {
  const forbidden = unsafeInputIssues(input);
  if (forbidden.length > 0) throw new InputError("options", forbidden);
  const parsed = options.safeParse(input ?? {});
  if (!parsed.success) throw new InputError("options", collectIssues(parsed.error.issues));
  return parsed.data;
}
