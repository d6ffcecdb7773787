/** Zod building blocks shared by the snapshot, node and options schemas. */
import { isIP } from "node:net";
import { posix } from "node:path";
import { z } from "zod";
import { isDnsLabel, isDnsSubdomain, isValidPort } from "../naming.js";

/** Canonical text of a valid IP address (no zone id): IPv6 lowercased and compressed, IPv4-mapped IPv6 as IPv4. */
export function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const hostname = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(hostname);
  if (!mapped) return hostname;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The longest address text accepted (a full IPv6 address with an embedded IPv4 is 45 characters). */
const MAX_IP_LENGTH = 64;

/**
 * Why `value` cannot name a pod, node or VIP, or undefined when it can (README, "Accepted
 * addresses"). Accepted: IPv4 in dotted-decimal without leading zeros, IPv6 in any RFC 4291 form,
 * IPv4-mapped IPv6 (taken as the IPv4 address), loopback (single-host labs). Refused: a zone id
 * (it names an interface of one host), leading zeros (octal to some parsers), and addresses no
 * endpoint can have: unspecified, multicast, broadcast and reserved IPv4, IPv6 link-local.
 */
export function ipAddressProblem(value: string): string | undefined {
  if (value.length > MAX_IP_LENGTH) return "not an IPv4/IPv6 address (too long)";
  if (value.includes("%")) return "an IPv6 zone id (%<interface>) names one host's interface: give the address without it";
  if (isIP(value) === 0) {
    return /^\d+\.\d+\.\d+\.\d+$/.test(value) ? "not an IPv4 address: leading zeros are ambiguous (octal to some parsers)" : "not an IPv4/IPv6 address";
  }
  const ip = canonicalIp(value);
  return isIP(ip) === 4 ? ipv4Problem(ip) : ipv6Problem(ip);
}

function ipv4Problem(ip: string): string | undefined {
  const first = Number(ip.split(".")[0]);
  if (first === 0) return `${ip} is in 0.0.0.0/8 (unspecified): no endpoint has it`;
  if (first >= 224 && first <= 239) return `${ip} is multicast: no endpoint has it`;
  if (ip === "255.255.255.255") return `${ip} is the broadcast address: no endpoint has it`;
  if (first >= 240) return `${ip} is in 240.0.0.0/4 (reserved): no endpoint has it`;
  return undefined;
}

function ipv6Problem(ip: string): string | undefined {
  if (ip === "::") return ":: is the unspecified address: no endpoint has it";
  if (/^ff/.test(ip)) return `${ip} is multicast: no endpoint has it`;
  if (/^fe[89ab]/.test(ip)) return `${ip} is link-local: it means nothing without a zone id, which names one host's interface`;
  return undefined;
}

/** An address a pod, node or VIP can have (see `ipAddressProblem`), in canonical form. */
export const ipAddress = z
  .string()
  .max(MAX_IP_LENGTH, { error: "not an IPv4/IPv6 address (too long)" })
  .transform((value, ctx) => {
    const problem = ipAddressProblem(value);
    if (problem === undefined) return canonicalIp(value);
    ctx.addIssue({ code: "custom", message: problem });
    return z.NEVER;
  });

export const port = z.number({ error: "not a port number" }).refine(isValidPort, { error: "not a port: must be an integer 1–65535" });

export const uint32 = z
  .number({ error: "not a number" })
  .int({ error: "not an integer" })
  .min(0, { error: "must be ≥ 0" })
  .max(0xffffffff, { error: "must fit in uint32" });

export const dnsLabel = z.string().refine(isDnsLabel, { error: "not a DNS-1123 label (lowercase a-z, 0-9 and '-', at most 63 characters)" });

export const dnsSubdomain = z.string().refine(isDnsSubdomain, { error: "not a DNS-1123 subdomain (lowercase dot-separated labels, at most 253 characters)" });

/** What a cluster name may hold: letters, digits, `.`, `_` and `-`, a letter or digit at each end. */
export const CLUSTER_NAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** Cluster names show up in metadata, identities and diagnostics: keep them printable and bounded. */
export const clusterName = z
  .string()
  .min(1, { error: "must not be empty" })
  .max(253, { error: "longer than 253 characters" })
  .regex(CLUSTER_NAME_PATTERN, { error: "only letters, digits, '.', '_' and '-' are allowed" });

export const trustDomain = z.string().refine((value) => isDnsSubdomain(value), { error: "not a SPIFFE trust domain (a lowercase DNS name)" });

export const spiffeId = z
  .string()
  .max(2048, { error: "longer than 2048 characters" })
  .regex(/^spiffe:\/\/[a-z0-9._-]+(\/[A-Za-z0-9._~%!$&'()*+,;=:@-]+)+$/, {
    error: "not a SPIFFE ID (spiffe://<trust-domain>/<path>)",
  });

/**
 * An absolute path to a network namespace, e.g. `/var/run/netns/cni-1234`, in normalized form
 * (`//`, `/./` and `x/..` resolved, no trailing `/`), so two spellings of one path are one netns.
 * Symlinks are not resolved: `/var/run` is often `/run`; give every record the same spelling.
 */
export const netnsPath = z
  .string()
  .max(4096, { error: "longer than 4096 characters" })
  .regex(/^\/[^\0]*$/, { error: "not an absolute path" })
  .transform(normalizeNetns);

/** What `normalizeNetns` changes in an absolute path: `//`, a `.` or `..` segment, a trailing `/`. */
const NOT_NORMALIZED = /\/\/|\/\.\.?(?:\/|$)|.\/$/;

/** The normalized form of an absolute path (see `netnsPath`). */
export function normalizeNetns(path: string): string {
  if (!NOT_NORMALIZED.test(path)) return path;
  const normalized = posix.normalize(path);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

/** A string that is either empty (unset in proto3) or valid under `schema`. */
export function orEmpty<Out extends string>(schema: z.ZodType<Out, string>) {
  return z.string().transform((value, ctx): Out | "" => {
    if (value === "") return "";
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message });
    return z.NEVER;
  });
}

export const locality = z.strictObject({
  region: z.string().max(256).default(""),
  zone: z.string().max(256).default(""),
});
