/**
 * Prometheus metrics for a server, from its events (prom-client, in a registry of its own):
 * connected proxies, pushes, push latency, NACKs and the age of the snapshot served.
 */
import { createServer, type Server } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { AdsServer } from "./ads-server.js";

/** A server's Prometheus metrics, and how to stop collecting them. */
export interface ServerMetrics {
  readonly registry: Registry;
  /** Stops following the server's events. */
  stop(): void;
}

/** Metrics fed by `server`'s events, in a new registry (`registry.metrics()` is the text format). */
export function serverMetrics(server: AdsServer): ServerMetrics {
  const registry = new Registry();
  const connected = new Gauge({
    name: "aether_xds_connected_proxies",
    help: "ADS streams connected, by protocol",
    labelNames: ["kind"],
    registers: [registry],
  });
  const pushes = new Counter({
    name: "aether_xds_pushes_total",
    help: "Discovery responses sent, by type URL",
    labelNames: ["type_url"],
    registers: [registry],
  });
  const nacks = new Counter({ name: "aether_xds_nacks_total", help: "Responses Envoy rejected, by type URL", labelNames: ["type_url"], registers: [registry] });
  const latency = new Histogram({
    name: "aether_xds_push_latency_seconds",
    help: "From a new snapshot to every affected stream pushed (recompiles included)",
    // Up to a minute: a change that reaches thousands of nodes takes seconds to push to all of them.
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers: [registry],
  });
  let servedAt: number | undefined;
  new Gauge({
    name: "aether_xds_snapshot_age_seconds",
    help: "Seconds since the snapshot being served was received (-1 before the first)",
    registers: [registry],
    collect() {
      this.set(servedAt === undefined ? -1 : (Date.now() - servedAt) / 1000);
    },
  });
  connected.set({ kind: "sotw" }, 0);
  connected.set({ kind: "delta" }, 0);
  const stop = server.on((event) => {
    switch (event.event) {
      case "connect":
        connected.inc({ kind: event.kind });
        break;
      case "disconnect":
        connected.dec({ kind: event.kind });
        break;
      case "push":
        pushes.inc({ type_url: event.typeUrl });
        break;
      case "nack":
        nacks.inc({ type_url: event.typeUrl });
        break;
      case "snapshot":
        servedAt = Date.now();
        latency.observe(event.durationMs / 1000);
        break;
    }
  });
  return { registry, stop };
}

/** An HTTP server answering `GET /metrics` with `registry`'s text format; 404 elsewhere. */
export function metricsHttpServer(registry: Registry): Server {
  return createServer((request, response) => {
    if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
      response.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { "content-type": registry.contentType }).end(text),
      (error: Error) => response.writeHead(500).end(error.message),
    );
  });
}
