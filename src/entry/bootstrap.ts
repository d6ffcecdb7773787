/**
 * `aether-xds/bootstrap`: a node's compiled resources wrapped into an Envoy bootstrap, so that
 * `envoy --mode validate -c bootstrap.yaml` checks exactly what aether-xds emits.
 */
export { type BootstrapInput, type BootstrapOptions, renderBootstrap, toBootstrap } from "../emit/bootstrap.js";
