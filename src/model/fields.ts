/** Zod building blocks shared by the snapshot, node and options schemas. */
import { isIP } from "node:net";
import { z } from "zod";
import { isDnsLabel, isDnsSubdomain, isValidPort } from "../naming.js";

/** Canonical text of an IP address: IPv6 lowercased and compressed, IPv4-mapped IPv6 as IPv4. */
export function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const hostname = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(hostname);
  if (!mapped) return hostname;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export const ipAddress = z
  .string()
  .max(64, { error: "not an IPv4/IPv6 address (too long)" })
  .refine((value) => isIP(value) !== 0, { error: "not an IPv4/IPv6 address" })
  .transform(canonicalIp);

export const port = z.number({ error: "not a port number" }).refine(isValidPort, { error: "not a port: must be an integer 1–65535" });

export const uint32 = z
  .number({ error: "not a number" })
  .int({ error: "not an integer" })
  .min(0, { error: "must be ≥ 0" })
  .max(0xffffffff, { error: "must fit in uint32" });

export const dnsLabel = z.string().refine(isDnsLabel, { error: "not a DNS-1123 label (lowercase a-z, 0-9 and '-', at most 63 characters)" });

export const dnsSubdomain = z.string().refine(isDnsSubdomain, { error: "not a DNS-1123 subdomain (lowercase dot-separated labels, at most 253 characters)" });

/** Cluster names show up in metadata, identities and diagnostics: keep them printable and bounded. */
export const clusterName = z
  .string()
  .min(1, { error: "must not be empty" })
  .max(253, { error: "longer than 253 characters" })
  .regex(/^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/, { error: "only letters, digits, '.', '_' and '-' are allowed" });

export const trustDomain = z.string().refine((value) => isDnsSubdomain(value), { error: "not a SPIFFE trust domain (a lowercase DNS name)" });

export const spiffeId = z
  .string()
  .max(2048, { error: "longer than 2048 characters" })
  .regex(/^spiffe:\/\/[a-z0-9._-]+(\/[A-Za-z0-9._~%!$&'()*+,;=:@-]+)+$/, {
    error: "not a SPIFFE ID (spiffe://<trust-domain>/<path>)",
  });

/** An absolute path to a network namespace, e.g. `/var/run/netns/cni-1234`. */
export const netnsPath = z
  .string()
  .max(4096, { error: "longer than 4096 characters" })
  .regex(/^\/[^\0]*$/, { error: "not an absolute path" });

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
