/**
 * A test PKI, generated at test time with the `openssl` CLI (never committed): one CA per trust
 * domain, and X.509-SVIDs — EC P-256 leaf certificates whose only SAN is the SPIFFE ID as a URI
 * (`spiffe://<td>/ns/<ns>/sa/<sa>`), usable as client and server certificates. Everything lives in
 * one directory the caller owns and removes.
 *
 *   const pki = createPki(dir);
 *   const svid = pki.svid("spiffe://aether.internal/ns/team-a/sa/frontend"); // { certPem, keyPem, certFile, keyFile, ... }
 *   pki.bundle("aether.internal")                                          // the CA certificate, PEM
 */
import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface KeyPair {
  readonly certPem: string;
  readonly keyPem: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface Svid extends KeyPair {
  readonly spiffeId: string;
  readonly trustDomain: string;
  /** The trust domain's CA certificate, PEM (the bundle that validates this SVID). */
  readonly bundlePem: string;
  readonly bundleFile: string;
}

export interface Pki {
  readonly dir: string;
  /** The CA of a trust domain, created on first use. */
  ca(trustDomain: string): KeyPair;
  /** The CA certificate (the trust bundle) of a trust domain, PEM. */
  bundle(trustDomain: string): string;
  /** An SVID for a SPIFFE ID, issued by its trust domain's CA; created once per ID. */
  svid(spiffeId: string): Svid;
}

/** `openssl version`, or a clear error naming how to get it. */
export function opensslVersion(): string {
  const run = spawnSync("openssl", ["version"], { encoding: "utf8" });
  if (run.error || run.status !== 0) throw new Error(`the Envoy suites need the openssl CLI (apt-get install openssl): ${run.error?.message ?? run.stderr}`);
  return run.stdout.trim();
}

/** `spiffe://td/path` → `td`; throws on anything that is not a SPIFFE ID. */
export function trustDomainOf(spiffeId: string): string {
  const match = /^spiffe:\/\/([a-z0-9._-]+)(\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?$/.exec(spiffeId);
  if (!match) throw new Error(`not a SPIFFE ID: ${spiffeId}`);
  return match[1]!;
}

/** The SPIFFE ID of a workload: `spiffe://<td>/ns/<ns>/sa/<sa>`. */
export function workloadId(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

function openssl(args: readonly string[], cwd: string): void {
  const run = spawnSync("openssl", args, { cwd, encoding: "utf8" });
  if (run.error || run.status !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${run.error?.message ?? run.stderr}`);
}

/** A file-name-safe form of a SPIFFE ID or trust domain. */
function fileStem(name: string): string {
  return name.replace(/^spiffe:\/\//, "").replace(/[^A-Za-z0-9._-]+/g, "_");
}

function randomSerial(): string {
  return `0x${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")}`.replace(/^0x0/, "0x1");
}

export function createPki(dir: string): Pki {
  opensslVersion();
  mkdirSync(dir, { recursive: true });
  const cas = new Map<string, KeyPair>();
  const svids = new Map<string, Svid>();

  function ca(trustDomain: string): KeyPair {
    const known = cas.get(trustDomain);
    if (known) return known;
    const stem = `ca-${fileStem(trustDomain)}`;
    const extFile = join(dir, `${stem}.ext`);
    writeFileSync(
      extFile,
      [
        "[req]",
        "distinguished_name = dn",
        "x509_extensions = v3_ca",
        "[dn]",
        "[v3_ca]",
        "basicConstraints = critical, CA:TRUE",
        "keyUsage = critical, keyCertSign, cRLSign",
        "subjectKeyIdentifier = hash",
        `subjectAltName = URI:spiffe://${trustDomain}`,
        "",
      ].join("\n"),
    );
    const certFile = join(dir, `${stem}.crt`);
    const keyFile = join(dir, `${stem}.key`);
    openssl(
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-sha256",
        "-days",
        "2",
        "-subj",
        `/O=aether-xds test/CN=${trustDomain}`,
        "-config",
        extFile,
        "-set_serial",
        randomSerial(),
        "-keyout",
        keyFile,
        "-out",
        certFile,
      ],
      dir,
    );
    const pair = { certPem: readFileSync(certFile, "utf8"), keyPem: readFileSync(keyFile, "utf8"), certFile, keyFile };
    cas.set(trustDomain, pair);
    return pair;
  }

  function svid(spiffeId: string): Svid {
    const known = svids.get(spiffeId);
    if (known) return known;
    const trustDomain = trustDomainOf(spiffeId);
    const authority = ca(trustDomain);
    const stem = `svid-${fileStem(spiffeId)}`;
    const keyFile = join(dir, `${stem}.key`);
    const csrFile = join(dir, `${stem}.csr`);
    const certFile = join(dir, `${stem}.crt`);
    const extFile = join(dir, `${stem}.ext`);
    writeFileSync(
      extFile,
      [
        "basicConstraints = critical, CA:FALSE",
        "keyUsage = critical, digitalSignature, keyAgreement",
        "extendedKeyUsage = serverAuth, clientAuth",
        "authorityKeyIdentifier = keyid",
        `subjectAltName = critical, URI:${spiffeId}`,
        "",
      ].join("\n"),
    );
    openssl(
      ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/O=aether-xds test", "-keyout", keyFile, "-out", csrFile],
      dir,
    );
    openssl(
      [
        "x509",
        "-req",
        "-in",
        csrFile,
        "-CA",
        authority.certFile,
        "-CAkey",
        authority.keyFile,
        "-set_serial",
        randomSerial(),
        "-days",
        "1",
        "-sha256",
        "-extfile",
        extFile,
        "-out",
        certFile,
      ],
      dir,
    );
    const result: Svid = {
      spiffeId,
      trustDomain,
      certPem: readFileSync(certFile, "utf8"),
      keyPem: readFileSync(keyFile, "utf8"),
      certFile,
      keyFile,
      bundlePem: authority.certPem,
      bundleFile: authority.certFile,
    };
    svids.set(spiffeId, result);
    return result;
  }

  return { dir, ca, bundle: (trustDomain) => ca(trustDomain).certPem, svid };
}

/**
 * A SPIFFE bundle map (the JSON a SPIRE agent writes for federation) holding each trust domain's
 * CA as an `x509-svid` JWK with its certificate in `x5c`.
 */
export function spiffeBundleMap(pki: Pki, trustDomains: readonly string[]): string {
  const domains = trustDomains.map((trustDomain) => {
    const certificate = new X509Certificate(pki.bundle(trustDomain));
    const jwk = certificate.publicKey.export({ format: "jwk" });
    return [trustDomain, { spiffe_sequence: 1, keys: [{ ...jwk, use: "x509-svid", x5c: [certificate.raw.toString("base64")] }] }];
  });
  return JSON.stringify({ trust_domains: Object.fromEntries(domains) }, null, 2);
}
