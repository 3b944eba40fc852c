# metacontroller-ts: the two commands are `make demo` and `make test`.
# Both install what they need: npm packages (npm ci) and the control-plane binaries (built from
# Go modules once, then reused from ~/.cache/metacontroller-ts/controlplane).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

NODE_STAMP := node_modules/.package-lock.json

.PHONY: help install controlplane node examples images monitoring helm check unit integration e2e operations build test demo demo-real run bench bench-large bench-upstream bench-huge fuzz clean

help:
	@echo "make demo          run the PodService demo on a local control plane (builds it on first use)"
	@echo "make demo-real     the PodService walkthrough on a real node: engine in-cluster (chart), Traefik, curl (root)"
	@echo "make run           start the control plane, engine and PodService hook, and keep them running"
	@echo "make test          format check, lint, type-check, unit, integration and e2e tests"
	@echo "make controlplane  build or reuse etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok"
	@echo "make node          build or reuse the real node: kubelet, kube-proxy, containerd, runc, CNI plugins, CoreDNS, images"
	@echo "make examples      build or reuse what upstream's examples run on the real node: their images, jsonnetd, image-mirror"
	@echo "make images        build the Dockerfiles without Docker (buildah; base images from Debian packages) and test the images"
	@echo "make operations    the in-cluster engine under what operators do: upgrades, rollbacks, faults (real node, root)"
	@echo "make monitoring    build or reuse promtool and test the engine's alert rules with it (promtool check/test rules)"
	@echo "make check         format check, lint and type-check only"
	@echo "make bench         run the benchmarks in bench/, the compiled engine at 1,000 parents included (figures go to docs/performance.md)"
	@echo "make bench-large   the 10,000-parent engine benchmarks, in-process and compiled (opt-in: long on 2 cores)"
	@echo "make bench-upstream ours against upstream Metacontroller v4.17.2 (built from source) at 1,000 parents, 3 rounds, and the floor any engine's converge time has here"
	@echo "make bench-huge    100,000 parents (ours, ours sharded ×3, upstream) and the API server's CPU per wire format (opt-in: hours on 2 cores)"
	@echo "make fuzz          the decoder properties of the unit tests, 10,000 cases each, random seed (printed)"

$(NODE_STAMP): package.json package-lock.json
	npm ci
	@touch $@

install: $(NODE_STAMP)

controlplane:
	@tools/controlplane/build.sh >/dev/null
	@tools/kwok/build.sh >/dev/null

# The real node (`metactl cluster up --runtime containerd`): tools/node/build.sh also installs the
# Debian packages it needs (iptables, conntrack, libseccomp-dev, busybox-static) when missing.
# Traefik is the real node's ingress controller (`make demo-real`); CoreDNS (tools/coredns: binary
# and image) its cluster DNS.
node:
	@tools/node/build.sh >/dev/null
	@tools/node/images.sh >/dev/null
	@tools/traefik/build.sh >/dev/null
	@tools/coredns/build.sh >/dev/null

# Upstream's examples on the real node (test/images/upstream-examples-in-cluster.test.ts): the
# nginx and busybox images their children run, tools/jsonnetd, and the image mirror.
examples: node
	@tools/node/example-images.sh >/dev/null
	@tools/image-mirror/build.sh >/dev/null

# The Dockerfiles (engine, `metactl init` scaffold, PodService example, the hook images upstream's
# examples name) built unchanged without Docker (docs/images.md): tools/images/ installs buildah
# and debootstrap when missing, assembles the base images once into
# ~/.cache/metacontroller-ts/images, then the tests build and run each image, and load two into a
# real node with `metactl cluster load` (root); then docs/deploy-your-controller.md, every command
# of it, on a real node from the packed package, every Pod we ship in namespaces enforcing the
# restricted Pod Security Standard (helm), and upstream's examples with the engine (chart) and
# their hooks in-cluster (docs/compat.md). Not part of `make test` (cold: about 22 min on 2 busy
# cores, 3.5 min of it the base images, 4.5 min the two real-node tests of the page and of
# restricted Pods, 2 min the two uncached engine builds of the reproducibility test, 6 min
# upstream's examples).
images: install node examples helm
	@tools/images/base-images.sh >/dev/null
	node --import tsx --test --test-reporter=spec --test-concurrency=1 \
	  test/images/dockerfile-builds.test.ts test/images/example-hook-images.test.ts \
	  test/images/real-node-load.test.ts test/images/engine-supply-chain.test.ts \
	  test/images/deploy-your-controller-real-node.test.ts test/images/restricted-pods.test.ts \
	  test/images/upstream-examples-in-cluster.test.ts

# What operators do to the in-cluster engine on a real node (issue 35): helm upgrades and rollbacks
# under load, Pod deletions, kubelet/containerd/API-server restarts, a cut from the API server.
# Every test/operations/*.test.ts, one at a time (each holds the real node). Not part of
# `make test`: long real-node runs; `.ci/run` runs it after `make images`.
operations: install controlplane node examples helm
	@files=$$(ls test/operations/*.test.ts 2>/dev/null || true); \
	if [ -z "$$files" ]; then echo "make operations: no test/operations/*.test.ts yet"; exit 0; fi; \
	node --import tsx --test --test-reporter=spec --test-concurrency=1 $$files

# The engine's alert rules (deploy/helm/metacontroller-ts/monitoring) under promtool, built from the
# Prometheus Go module by tools/promtool/build.sh and reused from the cache. Not part of
# `make test`: its cold build takes about 5 min on 2 busy cores.
monitoring: install
	@tools/promtool/build.sh >/dev/null
	node --import tsx --test --test-reporter=spec test/monitoring/alert-rules.test.ts

check: install
	npm run format:check
	npm run lint
	npm run typecheck

build: install
	npm run build

unit: install
	npm run test:unit

integration: install controlplane node examples
	npm run test:integration

helm:
	@tools/helm/build.sh >/dev/null

e2e: install controlplane node examples helm
	npm run test:e2e

test: check unit build integration e2e

demo: install controlplane
	node --import tsx scripts/demo.ts

# The walkthrough for real (scripts/demo-real.ts): images built without Docker (tools/node/app-images.sh),
# a real node, the engine's chart, Traefik, curl through the ingress.
demo-real: install controlplane node examples helm
	node --import tsx scripts/demo-real.ts

run: install controlplane
	node --import tsx scripts/run-podservice.ts

clean:
	rm -rf dist

bench: install controlplane
	node --import tsx bench/write-throughput.ts 2000 16
	node --import tsx bench/informer-sync.ts 10000
	node --expose-gc --import tsx bench/informer-memory.ts 5000 raw
	node --expose-gc --import tsx bench/informer-memory.ts 5000 strip
	node --expose-gc --import tsx bench/claim-complexity.ts
	node --import tsx bench/engine-parents.ts 1000 both
	node --import tsx bench/engine-process.ts 1000
	node --import tsx bench/leader-takeover.ts 10 both
	npm run build && node --import tsx bench/startup-modules.ts 3

bench-large: install controlplane
	BENCH_LARGE=1 node --import tsx bench/engine-parents.ts 10000 inprocess
	BENCH_LARGE=1 node --import tsx bench/engine-process.ts 10000

bench-upstream: install controlplane
	tools/upstream/build.sh
	node --import tsx bench/upstream-side-by-side.ts 1000 3
	node --import tsx bench/convergence-floor.ts 1000 16 3

bench-huge: install controlplane
	tools/upstream/build.sh
	BENCH_LARGE=1 nice -n 5 node --import tsx bench/huge-parents.ts 100000 1,3,upstream
	nice -n 5 node --import tsx bench/wire-formats.ts 10000 3

fuzz: install
	node --import tsx bench/property-fuzz.ts 10000
