/** Compile options (docs/contract.md, "Options") with their defaults. */
import { z } from "zod";
import { InputError, type InputIssue } from "../errors.js";
import { deepFreeze } from "../util/freeze.js";
import { ENVOY_FLOOR, ENVOY_VERSION_PATTERN, isAtLeast, SOURCE_IDENTITY_FLOORS } from "./envoy-version.js";
import { clusterName, port } from "./fields.js";
import { collectIssues, unsafeInputIssues } from "./issues.js";
import { resolveSettings, type Settings, settingsIssues, settingsSchema } from "./settings.js";

/** Where Envoy fetches EDS or SDS resources: the ADS stream, or a named gRPC cluster. */
const configSource = z.union([z.literal("ads"), z.strictObject({ grpcCluster: clusterName })]);
export type ConfigSourceOption = z.output<typeof configSource>;

export const WAYPOINT_MODES = ["off", "cross-cluster", "always"] as const;
export type WaypointMode = (typeof WAYPOINT_MODES)[number];
export const SOCKET_SELECTIONS = ["matcher", "aggregate"] as const;
export type SocketSelection = (typeof SOCKET_SELECTIONS)[number];
export const SOURCE_IDENTITIES = ["selector", "sockets"] as const;
export type SourceIdentity = (typeof SOURCE_IDENTITIES)[number];

/** Filter-state keys Envoy sets or reads itself, which a stamp must not reuse. */
const RESERVED_FILTER_STATE_KEYS = new Set(["envoy.network.network_namespace", "envoy.tls.certificate_mappers.on_demand_secret"]);

/** The SDS cluster the certificate selector uses when neither `selectorSds` nor a gRPC `sds` names one. */
export const DEFAULT_SELECTOR_SDS_CLUSTER = "sds_grpc";

const optionsSchema = z.strictObject({
  /** Which endpoints are dialed through their node's waypoint. */
  eastWestWaypoint: z.enum(WAYPOINT_MODES).default("off"),
  /** The pod inbound mTLS port. */
  inboundPort: port.default(15008),
  /** The node tunnel listener's port. */
  tunnelPort: port.default(15009),
  /** The pod's HTTP egress listener port, on 127.0.0.1 in the pod's netns. */
  egressPort: port.default(15001),
  /** The pod's transparent capture port for service VIPs, in the pod's netns. */
  capturePort: port.default(15002),
  /** One cluster with a two-level transport-socket matcher, or the aggregate-cluster fallback. */
  socketSelection: z.enum(SOCKET_SELECTIONS).default("matcher"),
  /**
   * How an outbound connection presents its source pod's certificate: chosen per connection from
   * the identity its listener stamped (`selector`), or one socket per source with a connection
   * pool per downstream connection (`sockets`).
   */
  sourceIdentity: z.enum(SOURCE_IDENTITIES).default("selector"),
  /** The oldest Envoy the output must run on, `"1.<minor>"`. */
  envoyVersion: z.string().regex(ENVOY_VERSION_PATTERN, { error: 'not an Envoy version "1.<minor>"' }).default("1.38"),
  /**
   * Filter-state key under which each pod's outbound listeners stamp its netns path, and which the
   * `sockets`-mode socket matcher reads. Not Envoy's own `envoy.network.network_namespace`: that
   * object never reaches a cluster's socket matcher.
   */
  netnsFilterStateKey: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[\w.-]+$/, { error: "only letters, digits, '_', '.' and '-'" })
    .refine((key) => !RESERVED_FILTER_STATE_KEYS.has(key), { error: "a key Envoy itself sets: the socket matcher would never see the stamped value" })
    .default("aether.source_netns"),
  /** Source of SDS secrets (SVIDs and CA bundles). */
  sds: configSource.default("ads"),
  /**
   * The gRPC cluster the certificate selector fetches SVIDs from, on its own stream (`selector`
   * mode). Never ADS: a secret the node already watches over ADS is not delivered to a second
   * watch on the same stream. Default: the `sds` cluster, else `sds_grpc`.
   */
  selectorSds: clusterName.optional(),
  /** Source of the outbound clusters' EDS. */
  eds: configSource.default("ads"),
  /** Production settings: a preset and per-setting overrides (see `Settings`). */
  settings: settingsSchema.default({ preset: "production" }),
});

/** Compile options as callers give them: every field is optional (see `Options` for the defaults). */
export type OptionsInput = z.input<typeof optionsSchema>;
/** Compile options, validated, every default filled in (`selectorSds` resolved to a cluster). */
export type Options = Omit<z.output<typeof optionsSchema>, "selectorSds" | "settings"> & { readonly selectorSds: string; readonly settings: Settings };

/** Options `parseOptions` returned: validated and frozen, so passing them again skips the work. */
const validatedOptions = new WeakSet<object>();

/**
 * Validates compile options and fills in the defaults, or throws one `InputError` listing every
 * problem. Returns a new, frozen object; passing that object again returns it as it is. The object
 * passed in is never remembered: change it and pass it again, and it is validated again.
 */
export function parseOptions(input: unknown = {}): Options {
  if (typeof input === "object" && input !== null && validatedOptions.has(input)) return input as Options;
  const options = deepFreeze(validateOptions(input));
  validatedOptions.add(options);
  return options;
}

function validateOptions(input: unknown = {}): Options {
  const forbidden = unsafeInputIssues(input);
  if (forbidden.length > 0) throw new InputError("options", forbidden);
  const parsed = optionsSchema.safeParse(input ?? {});
  if (!parsed.success) throw new InputError("options", collectIssues(parsed.error.issues, input));
  const settings = resolveSettings(parsed.data.settings);
  const issues = [...versionIssues(parsed.data), ...podPortIssues(parsed.data), ...settingsIssues(settings)];
  if (issues.length > 0) throw new InputError("options", issues);
  const { selectorSds, ...rest } = parsed.data;
  return { ...rest, settings, selectorSds: selectorSds ?? (rest.sds === "ads" ? DEFAULT_SELECTOR_SDS_CLUSTER : rest.sds.grpcCluster) };
}

/** A mode that needs a newer Envoy than the one named is refused, not emitted for proxies that would NACK it. */
function versionIssues(options: z.output<typeof optionsSchema>): InputIssue[] {
  if (!isAtLeast(options.envoyVersion, ENVOY_FLOOR)) {
    return [{ path: "envoyVersion", message: `Envoy ${options.envoyVersion} is older than ${ENVOY_FLOOR}, the oldest aether-xds supports` }];
  }
  const floor = SOURCE_IDENTITY_FLOORS[options.sourceIdentity];
  if (isAtLeast(options.envoyVersion, floor)) return [];
  const other = options.sourceIdentity === "selector" ? ' (or sourceIdentity "sockets", which runs on 1.37)' : "";
  return [
    {
      path: "sourceIdentity",
      message: `"${options.sourceIdentity}" needs Envoy ≥ ${floor}, but envoyVersion is ${options.envoyVersion}: raise envoyVersion${other}`,
    },
  ];
}

/** The inbound, egress and capture listeners all bind inside each pod's netns: their ports must differ. */
function podPortIssues(options: z.output<typeof optionsSchema>): InputIssue[] {
  const seen = new Map<number, string>();
  const issues: InputIssue[] = [];
  for (const name of ["inboundPort", "egressPort", "capturePort"] as const) {
    const other = seen.get(options[name]);
    if (other) issues.push({ path: name, message: `${options[name]} is also ${other}: both listeners bind in each pod's network namespace` });
    seen.set(options[name], name);
  }
  return issues;
}
