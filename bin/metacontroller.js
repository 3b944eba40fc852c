#!/usr/bin/env node
// Upstream Metacontroller's binary, `/usr/bin/metacontroller` in the image: the engine
// (`metactl run`) with upstream's bare flags, so that manifests written for upstream's image
// (`command: ["/usr/bin/metacontroller"]`, flags as `args`) run unchanged. The listen addresses
// default to upstream's `:9999` and `:8081`, where those manifests point their probes; flags
// given to this command come later and win, as a repeated flag does in Go.
process.argv.splice(2, 0, 'run', '--metrics-address=:9999', '--health-probe-bind-address=:8081')
await import('./metactl.js')
