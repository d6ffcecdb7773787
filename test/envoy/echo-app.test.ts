/**
 * The echo app (test/envoy/support/echo-app.ts): HTTP/1.1 and HTTP/2 cleartext on one port,
 * replying with the XFCC header it received, and a TCP echo. In-process on 127.0.0.1, plus one
 * run as its own process (how the data-plane tests start it, in a pod's netns).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { connect as http2Connect } from "node:http2";
import { type Server, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { type EchoReply, httpEchoServer, tcpEchoServer } from "./support/echo-app.js";
import { startProcess, tsxCommand, waitUntil } from "./support/processes.js";

const dir = mkdtempSync(join(tmpdir(), "aether-echo-"));
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

function listen(server: Server): Promise<number> {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

function http1(port: number, headers: Record<string, string>): Promise<EchoReply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/h1?x=1", headers }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve(JSON.parse(body)));
    });
    req.on("error", reject);
    req.end();
  });
}

function http2(port: number, headers: Record<string, string>): Promise<EchoReply> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":path": "/h2", ...headers });
    let body = "";
    stream.on("data", (chunk) => (body += chunk));
    stream.on("end", () => {
      session.close();
      resolve(JSON.parse(body));
    });
    stream.on("error", reject);
  });
}

const XFCC = "By=spiffe://aether.internal/ns/team-a/sa/checkout;URI=spiffe://aether.internal/ns/team-a/sa/frontend";

describe("echo app", () => {
  test("HTTP/1.1 and HTTP/2 cleartext on one port, each replying with the XFCC header it got", async () => {
    const port = await listen(httpEchoServer("pod-a"));
    expect(await http1(port, { "x-forwarded-client-cert": XFCC })).toEqual({
      app: "pod-a",
      protocol: "http/1.1",
      method: "GET",
      path: "/h1?x=1",
      authority: `127.0.0.1:${port}`,
      xfcc: XFCC,
    });
    expect(await http2(port, { "x-forwarded-client-cert": XFCC })).toMatchObject({ app: "pod-a", protocol: "h2", path: "/h2", xfcc: XFCC });
    expect((await http2(port, {})).xfcc).toBeNull();
  });

  test("the TCP echo returns every byte", async () => {
    const port = await listen(tcpEchoServer());
    const payload = "x".repeat(100_000);
    const echoed = await new Promise<string>((resolve, reject) => {
      const socket = tcpConnect(port, "127.0.0.1", () => socket.write(payload));
      let got = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk) => {
        got += chunk;
        if (got.length >= payload.length) {
          socket.end();
          resolve(got);
        }
      });
      socket.on("error", reject);
    });
    expect(echoed).toBe(payload);
  });

  test("as a process it prints its ports once listening and stops on SIGTERM", async () => {
    const app = startProcess(tsxCommand("test/envoy/support/echo-app.ts", [JSON.stringify({ name: "p", host: "127.0.0.1", http: [0], tcp: [0] })]), {
      name: "echo",
      logDir: dir,
    });
    const line = await waitUntil(
      () => /^listening (.*)$/m.exec(app.stdout())?.[1],
      20_000,
      () => app.stderr(),
    );
    const ports = JSON.parse(line);
    expect((await http1(ports.http[0], {})).app).toBe("p");
    expect(await app.stop()).toMatchObject({ code: 0, killed: false });
  });
});
