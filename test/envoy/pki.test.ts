/**
 * The test PKI (test/envoy/support/pki.ts): CAs per trust domain and SVIDs with SPIFFE URI SANs,
 * checked with Node's X.509 parser and `openssl verify`. No network, no Envoy.
 */
import { spawnSync } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { createPki, trustDomainOf, workloadId } from "./support/pki.js";

const dir = mkdtempSync(join(tmpdir(), "aether-pki-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pki = createPki(dir);

describe("test PKI", () => {
  const frontend = workloadId("east.aether", "team-a", "frontend");
  const svid = pki.svid(frontend);
  const cert = new X509Certificate(svid.certPem);
  const ca = new X509Certificate(pki.bundle("east.aether"));

  test("an SVID's only SAN is its SPIFFE ID as a URI, and it is a leaf for client and server use", () => {
    expect(cert.subjectAltName).toBe(`URI:${frontend}`);
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(expect.arrayContaining(["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]));
    expect(cert.checkPrivateKey(createPrivateKey(svid.keyPem))).toBe(true);
  });

  test("it is issued by its trust domain's CA, and only that CA verifies it", () => {
    expect(ca.ca).toBe(true);
    expect(ca.subjectAltName).toBe("URI:spiffe://east.aether");
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    const other = new X509Certificate(pki.bundle("west.aether"));
    expect(cert.verify(other.publicKey)).toBe(false);
    const verify = (caFile: string) => spawnSync("openssl", ["verify", "-purpose", "sslclient", "-CAfile", caFile, svid.certFile], { encoding: "utf8" }).status;
    expect(verify(svid.bundleFile)).toBe(0);
    expect(verify(pki.ca("west.aether").certFile)).not.toBe(0);
  });

  test("one CA per trust domain, one SVID per ID (cached), distinct keys", () => {
    expect(pki.svid(frontend)).toBe(svid);
    expect(pki.ca("east.aether")).toBe(pki.ca("east.aether"));
    const checkout = pki.svid(workloadId("east.aether", "team-a", "checkout"));
    expect(checkout.keyPem).not.toBe(svid.keyPem);
    expect(new X509Certificate(checkout.certPem).checkIssued(ca)).toBe(true);
    expect(new X509Certificate(checkout.certPem).serialNumber).not.toBe(cert.serialNumber);
  });

  test("trustDomainOf reads SPIFFE IDs and refuses anything else", () => {
    expect(trustDomainOf("spiffe://aether.internal/ns/a/sa/b")).toBe("aether.internal");
    expect(trustDomainOf("spiffe://aether.internal")).toBe("aether.internal");
    expect(() => trustDomainOf("https://aether.internal/x")).toThrow(/not a SPIFFE ID/);
  });
});
