# swiftpush: the two commands a newcomer needs are `make demo` and `make test`.
#   make demo       build (release), start the mock APNs server, send 100,000 notifications
#                   through libswiftpush.so from C, print throughput and outcomes
#   make test       every test: Swift unit + mock tests, header checks, C ABI end-to-end tests, the Swift
#                   examples (Examples/NotifyService/Sources: Hummingbird service, README blocks; make test-example),
#                   the Redis layer (make test-redis), the Redis Streams worker end to end (make test-worker)
#                   and on a Redis Cluster through a failover (make test-worker-cluster),
#                   `swiftpush status` and the status page in headless Chromium (make test-status)
#                   README's "Getting started" as written (make test-quickstart), a package using
#                   SwiftPushKit built from scratch by version and by path (make test-consumer)
#   make bench      the library against h2load on the same mock server, and the Swift API's rows (see README);
#                   BENCH_BASELINE=<release dir of another build> adds that build, interleaved (A/B)
#   make bench-latency  the same with answers 20, 50 and 100 ms late, 1, 4 and 8 connections
#                   (a few minutes; LAT_DELAYS, LAT_CONNECTIONS, LAT_RUNS, LAT_COUNT for a quick run),
#                   after the mock's own capacity with and without delay (LAT_MOCK_CAPACITY=0 skips it)
#   make demo-worker    Redis + mock + two workers: 100,000 notifications through the queue
#   make bench-worker   the Redis Streams worker against the raw library rate, and a lone
#                   notification's latency, XADD to request and to outcome (docs/worker.md)
#   make bench-worker-cluster  what WAIT costs the worker on a Redis Cluster
#   make chaos / make soak / make test-tsan   long reliability runs (not part of make test)
#   make wheel      dist/swiftpush-<version>-py3-none-manylinux_2_35_x86_64.whl (the library inside,
#                   with its own OpenSSL and nghttp2: auditwheel)
#   make deb        dist/swiftpush_<version>_amd64.deb (library, header, .pc, swiftpush, man page,
#                   bash/zsh/fish completions)
#   make install PREFIX=...   library, header, swiftpush.pc, bin/swiftpush, its man page and completions
#   make dist       a release's files in dist/: source archive, wheel, .deb, binary tarball, SHA256SUMS
#   make header     regenerate Include/swiftpush.h from the Swift exports
#   make generate   regenerate the enums and the options (Tables/*.tsv) for C, Swift, Python, Go
# Each target installs missing Debian packages itself (scripts/install-deps.sh).

SWIFT        ?= swift
DEBUG_DIR    := .build/debug
RELEASE_SCRATCH := .build-release
RELEASE_DIR  := $(RELEASE_SCRATCH)/release
PKI          := .build-pki
PREFIX       ?= /usr/local
# The one source of the release's version (scripts/gen_version.py writes it everywhere else).
VERSION      := $(shell cat VERSION)
# When this make started (stage times of make test count from it).
MAKE_STARTED := $(shell date +%s)
# libswiftpush.so.<major>: the library's SONAME (docs/abi.md); installs carry
# libswiftpush.so.$(VERSION) and two links, SONAME and libswiftpush.so.
SONAME       := libswiftpush.so.$(firstword $(subst ., ,$(VERSION)))
# Each shell suite of make test runs bounded (SUITE_BOUND seconds, default 2700) and fails when
# it leaves a process of its own running (scripts/in-own-group.sh, issue 36).
IN_OWN_GROUP := bash scripts/in-own-group.sh
# The bindings whose suites make test-bindings runs (Bindings/run-tests.sh).
BINDINGS     ?= python go
# The .deb's xz level: dpkg-deb's default 6 for a release (20.0 MiB); make test packs with 1, the
# same files 16% larger for 7 CPU-s instead of 42 (Tests/deb/run.sh checks what is inside).
DEB_XZ_LEVEL ?= 6
# Release artifacts carry the Swift runtime inside (no toolchain needed to use them).
RELEASE_FLAGS := -c release --scratch-path $(RELEASE_SCRATCH) -Xswiftc -static-stdlib -Xswiftc -gnone

.PHONY: all deps build release release-lib header version generate pki test build-tests build-examples test-docs test-version test-platforms dist test-dist test-swift test-header test-c test-cli test-example test-redis test-worker test-worker-cluster test-status test-bindings test-alloc test-install test-wheel test-deb wheel deb test-asan test-tsan test-fuzz memcheck chaos soak install demo bench bench-scaling bench-latency bench-worker bench-worker-cluster demo-worker clean

all: build

deps:
	@bash scripts/install-deps.sh

generate:
	python3 scripts/gen_tables.py

# The command is `swiftpush`: the SwiftPM product is named swiftpush-cli (the library product owns
# the name swiftpush), so each build also leaves BUILD_DIR/swiftpush, a hard link to it,
# BUILD_DIR/swiftpush.1, its man page generated from its own --help text, and its shell completions
# as ArgumentParser writes them (--generate-completion-script), each under the name its shell looks
# for: BUILD_DIR/completions/bash/swiftpush, zsh/_swiftpush, fish/swiftpush.fish. Both are made
# from the built command, never committed, so they follow every new command and option.
COMPLETIONS := bash/swiftpush zsh/_swiftpush fish/swiftpush.fish
# The Swift examples' products: one executable target per directory of
# Examples/NotifyService/Sources (make test-example runs them; Tests/example/run.sh reads the same).
EXAMPLES := $(notdir $(wildcard Examples/NotifyService/Sources/*))

build: deps
	$(SWIFT) build --product swiftpush
	bash scripts/soname-link.sh $(DEBUG_DIR)
	$(SWIFT) build --product swiftpush-cli
	$(call command-and-man,$(DEBUG_DIR))

# The library alone (what `make wheel` ships), then the command.
release-lib: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product swiftpush
	bash scripts/soname-link.sh $(RELEASE_DIR)

release: release-lib
	$(SWIFT) build $(RELEASE_FLAGS) --product swiftpush-cli
	$(call command-and-man,$(RELEASE_DIR))

define command-and-man
ln -f $(1)/swiftpush-cli $(1)/swiftpush 2>/dev/null || cp -f $(1)/swiftpush-cli $(1)/swiftpush
python3 scripts/gen_manpage.py $(1)/swiftpush $(VERSION) > $(1)/swiftpush.1.tmp && mv $(1)/swiftpush.1.tmp $(1)/swiftpush.1
for f in $(COMPLETIONS); do sh=$${f%%/*}; mkdir -p $(1)/completions/$$sh \
  && $(1)/swiftpush --generate-completion-script $$sh > $(1)/completions/$$f.tmp && mv $(1)/completions/$$f.tmp $(1)/completions/$$f \
  || exit 1; done
endef

header: build
	python3 scripts/gen_header.py $(DEBUG_DIR)/SwiftPush.build/include/SwiftPush-Swift.h

# After editing VERSION: writes it into the headers, the Swift, Python and Go sources, the SONAME
# and README (scripts/gen_version.py); make test-version checks that they agree.
version:
	python3 scripts/gen_version.py

pki:
	@bash scripts/make-test-pki.sh $(PKI) >/dev/null

# make test: the debug products and the tests in one build (one build graph: SwiftPM runs the
# test targets' compiles beside the command's), which also checks that every target imports only
# the targets it declares (docs/architecture.md, "Modules": an undeclared import would otherwise
# compile whenever the other module happened to be built first); then scripts/make-test.sh runs
# the stages below, the builds only later stages need (release, ASan, fuzzing) in the background
# while the debug suites run. Each stage's wall and CPU time (its wait for
# a build included) is printed as it ends and again as a table at the end, also on failure, in
# out/test-times.txt: where make test's time goes (issue 34, item 6).
test: deps pki
	@mkdir -p out && MAKE="$(MAKE)" bash scripts/make-test.sh $(MAKE_STARTED)

# make test's first stage: the debug products and the tests, one build, then what `make build`
# adds to it (the SONAME link, the command's name, man page and completions) without running
# `swift build` again: each `swift build` or `swift test` in make test costs 10-15 s before it
# builds anything when the environment differs from the last one's (SwiftPM keys its cache of
# the 20 dependency manifests on the whole environment, and every make level and script changes
# it), so make test runs as few of them as it can.
build-tests: deps
	$(SWIFT) build --build-tests --explicit-target-dependency-import-check error
	bash scripts/soname-link.sh $(DEBUG_DIR)
	$(call command-and-man,$(DEBUG_DIR))

# The ASan package's and the fuzz harnesses' builds alone (make test runs them in the background).
build-asan: build
	SANITIZE_BUILD_ONLY=1 bash scripts/sanitize.sh address

build-fuzz:
	FUZZ_BUILD_ONLY=1 bash Tests/fuzz/run.sh 10

# Every document cites code by name: every name in backticks must still exist (issue 25, and
# issue 34 for all of them); docs/architecture.md's module table lists exactly Package.swift's
# targets; every target declares each module of the package it imports; the client's machine
# cannot reach OpenSSL, nghttp2 or the transport.
test-docs: test-version test-platforms
	python3 scripts/check-doc-names.py --self-test
	python3 scripts/check-doc-names.py --all
	python3 scripts/check-module-table.py --self-test
	python3 scripts/check-module-table.py
	python3 scripts/check-target-imports.py --self-test
	python3 scripts/check-target-imports.py
	python3 scripts/check-sanitizer-package.py --self-test
	python3 scripts/check-sanitizer-package.py
	python3 scripts/check-pure-targets.py --self-test
	python3 scripts/check-pure-targets.py

# Every place that states the version says VERSION's, and CHANGELOG.md has its section.
test-version:
	bash scripts/check-version.sh

# What runs where (README, "Platforms"): a build for another system stops with one sentence, the
# example package declares no other platform.
test-platforms:
	bash Tests/platforms/run.sh

# Bounded, and failed by an issue recorded outside any test or a process left behind (issue 36).
test-swift:
	SWIFT=$(SWIFT) bash scripts/run-swift-tests.sh

test-header:
	$(IN_OWN_GROUP) bash Tests/header/check-header.sh $(DEBUG_DIR)

test-c:
	$(IN_OWN_GROUP) bash Tests/c/run.sh $(DEBUG_DIR)

test-cli:
	$(IN_OWN_GROUP) bash Tests/cli/run.sh $(DEBUG_DIR)

# The Swift examples (Examples/NotifyService/Sources: executable targets of this package, a
# Hummingbird 2 service and the README's Swift blocks) against the mock (Tests/example/run.sh).
test-example: build-examples pki
	$(IN_OWN_GROUP) bash Tests/example/run.sh $(DEBUG_DIR)

# The examples' products (make build-tests has built them in make test).
build-examples: build
	for p in $(EXAMPLES); do $(SWIFT) build --product $$p || exit 1; done

# README's "Getting started" as written (Tests/quickstart/run.sh): `swiftpush mock --quickstart`
# makes a test PKI and prints the APNS_* exports, the C, Python, Go and Swift examples run against
# it (the Swift one with `swift run SendOne`, in .build), the PKI is kept across
# a restart.
.PHONY: test-quickstart test-consumer
test-quickstart: build
	$(IN_OWN_GROUP) bash Tests/quickstart/run.sh

# A package depending on this one for SwiftPushKit with `traits: []`, built from scratch by
# version (a git repository of this checkout tagged $(VERSION), by file:// URL) and by path:
# exactly swift-log, swift-metrics, swift-service-lifecycle (and theirs) resolved, no warning,
# one notification sent to the mock (Tests/consumer/run.sh).
test-consumer: build pki
	$(IN_OWN_GROUP) bash Tests/consumer/run.sh $(DEBUG_DIR) $(VERSION)

# The Redis layer through the CLI: enqueue/outcomes over TLS with an ACL user (and refused at
# once for a wrong password, CA or host name), and on a 3+3 Redis Cluster (Tests/redis/run.sh).
# SwiftPushRedisTests (in test-swift) test the layer itself on the same kinds of servers.
test-redis: build pki
	$(IN_OWN_GROUP) bash Tests/redis/run.sh $(DEBUG_DIR)

# The queue-fed worker against a real redis-server and the mock: 100,000 entries end to end,
# SIGKILL/restart, SIGTERM drain, bad entries, Redis restart (Tests/worker/run.sh BUILD_DIR COUNT,
# in four parts at once, each with its own Redis and mock: Tests/worker/run-parts.sh); then Redis, the mock and two workers in separate network namespaces (skipped without root).
# The worker's suites run the release build, what operators deploy (the library's own suites
# run the debug one): in debug they sent about 1,000 notifications a second and were a third of
# make test's time (issue 34, item 6), the same tests in release take under half as long.
test-worker: release pki
	$(IN_OWN_GROUP) bash Tests/worker/run-parts.sh $(RELEASE_DIR) 100000 4
	$(IN_OWN_GROUP) bash Tests/worker/netns.sh $(RELEASE_DIR) 20000

# The worker on a 3-master + 3-replica Redis Cluster (TLS, an ACL user): 100,000 notifications over
# 6 shards, 2 workers each serving all 6, a master SIGKILLed mid-run; with WAIT 1 on every write
# and without (Tests/worker/cluster.sh; what each may lose: docs/worker.md, "Redis Cluster").
test-worker-cluster: release pki
	$(IN_OWN_GROUP) bash Tests/worker/cluster.sh $(RELEASE_DIR) 100000

# `swiftpush status` and the worker's HTTP server and status page against a real redis-server, the
# mock and a running worker: 50 idle connections, JSON, a terminal's redraw, rates, empty views,
# and the page in Debian's headless Chromium (installed here if missing) checked against Redis,
# its screenshot left in out/status/status-page.png.
test-status: build pki
	$(IN_OWN_GROUP) bash Tests/status/run.sh $(DEBUG_DIR) out/status

# Sanitizers: the end-to-end Swift suites under ASan (+UBSan for C) in make test; TSan on demand.
# Built from Tests/sanitizers/Package.swift (the suites and what they test, not the command and
# its packages); the mock tests run the debug build's command, hence `build`.
test-asan: build-asan
	SANITIZE_SKIP_BUILD=1 $(IN_OWN_GROUP) bash scripts/sanitize.sh address

test-tsan: build
	bash scripts/sanitize.sh thread

# valgrind memcheck of the C examples (send_one.c, load.c with GOAWAYs, refused streams, 503s).
memcheck: build pki
	$(IN_OWN_GROUP) bash scripts/memcheck.sh $(DEBUG_DIR)

# libFuzzer harnesses, 10 s each over the committed corpora (Tests/fuzz/run.sh 600 for long runs).
test-fuzz: build-fuzz
	FUZZ_SKIP_BUILD=1 $(IN_OWN_GROUP) bash Tests/fuzz/run.sh 10

# Long runs (not in make test): 1,000,000-notification chaos run; 5,000,000-notification soak.
chaos:
	bash Tests/chaos/run.sh 1000000

soak: release pki
	bash scripts/soak.sh $(RELEASE_DIR) 5000000

# The bindings' own suites (pytest, go vet + go test) against the debug build; make test sets
# BINDINGS=go, since test-wheel runs the Python suite against the installed wheel.
test-bindings:
	BINDINGS="$(BINDINGS)" $(IN_OWN_GROUP) bash Bindings/run-tests.sh $(DEBUG_DIR)

# Allocation counting needs the optimized library (what users ship).
test-alloc: release
	$(IN_OWN_GROUP) bash Tests/perf/run.sh $(RELEASE_DIR)

demo: release pki
	bash scripts/demo.sh $(RELEASE_DIR) $(PKI)

bench: release pki
	$(SWIFT) build $(RELEASE_FLAGS) --product swiftpushkit-bench
	bash scripts/bench.sh $(RELEASE_DIR) $(PKI)

bench-scaling: release pki
	bash scripts/bench-scaling.sh $(RELEASE_DIR) $(PKI)

# Not part of make test: minutes long, and a timing is never a test assertion.
bench-latency: release pki
	bash scripts/bench-latency.sh $(RELEASE_DIR) $(PKI)

# What WAIT costs the worker on a Redis Cluster: one worker on 6 shards of a 3+3 cluster, without
# and with wait_replicas 1, interleaved (scripts/bench-worker-cluster.sh).
bench-worker-cluster: release pki
	bash scripts/bench-worker-cluster.sh $(RELEASE_DIR) $(PKI)

# Redis + mock + two workers: 100,000 notifications through the queue, outcomes summed.
demo-worker: release pki
	bash scripts/demo-worker.sh $(RELEASE_DIR) $(PKI)

# The Redis Streams worker (1, then 2 workers) against the raw library rate on the same mock.
bench-worker: release pki
	bash scripts/bench-worker.sh $(RELEASE_DIR) $(PKI)

# Installs the self-contained library (Swift runtime linked in), the header, swiftpush.pc, the
# command (bin/swiftpush), its man page and its completions where bash-completion, zsh and fish
# look under PREFIX (zsh: site-functions, which zsh's default fpath holds for /usr/local; the .deb
# sets ZSH_COMPLETIONS to Debian's /usr/share/zsh/vendor-completions):
#   make install PREFIX=/opt/swiftpush   then   cc app.c $(pkg-config --cflags --libs swiftpush)
ZSH_COMPLETIONS ?= $(PREFIX)/share/zsh/site-functions
# The library is libswiftpush.so.$(VERSION) with the links $(SONAME) (what programs load) and
# libswiftpush.so (what -lswiftpush finds); LICENSE and NOTICE go to share/doc/swiftpush.
install: release
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(ZSH_COMPLETIONS) $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d $(DESTDIR)$(PREFIX)/share/doc/swiftpush
	install -m 755 $(RELEASE_DIR)/libswiftpush.so $(DESTDIR)$(PREFIX)/lib/libswiftpush.so.$(VERSION)
	ln -sfn libswiftpush.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sfn $(SONAME) $(DESTDIR)$(PREFIX)/lib/libswiftpush.so
	install -m 644 LICENSE NOTICE $(DESTDIR)$(PREFIX)/share/doc/swiftpush/
	install -m 644 Include/swiftpush.h $(DESTDIR)$(PREFIX)/include/swiftpush.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' Bindings/c/pkgconfig/swiftpush.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/swiftpush.pc
	install -m 755 $(RELEASE_DIR)/swiftpush $(DESTDIR)$(PREFIX)/bin/swiftpush
	install -m 644 $(RELEASE_DIR)/swiftpush.1 $(DESTDIR)$(PREFIX)/share/man/man1/swiftpush.1
	install -m 644 $(RELEASE_DIR)/completions/bash/swiftpush $(DESTDIR)$(PREFIX)/share/bash-completion/completions/swiftpush
	install -m 644 $(RELEASE_DIR)/completions/zsh/_swiftpush $(DESTDIR)$(ZSH_COMPLETIONS)/_swiftpush
	install -m 644 $(RELEASE_DIR)/completions/fish/swiftpush.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/swiftpush.fish

test-install: release pki
	$(IN_OWN_GROUP) bash Tests/install/run.sh $(RELEASE_DIR)

# Python wheel carrying the release libswiftpush.so next to the package and, vendored by auditwheel
# repair, the libssl, libcrypto and libnghttp2 it loads (py3-none-manylinux_2_35_x86_64: the
# policy and why in scripts/build-wheel.sh). test-wheel also runs it with those of the system
# hidden (as root) and the Python suite against it.
# The wheel holds the library only, so only the library is built (release-lib, not the command
# and its server dependencies); test-wheel needs the command too, for the mock.
wheel: release-lib
	bash scripts/build-wheel.sh $(RELEASE_DIR) dist

test-wheel: wheel release pki
	$(IN_OWN_GROUP) bash Tests/wheel/run.sh $(RELEASE_DIR) dist

# Debian package (dpkg-deb): library, header, .pc, /usr/bin/swiftpush, man page; Depends computed.
deb: release
	DEB_XZ_LEVEL=$(DEB_XZ_LEVEL) bash scripts/build-deb.sh $(RELEASE_DIR) dist

test-deb: deb pki
	$(IN_OWN_GROUP) bash Tests/deb/run.sh $(RELEASE_DIR) dist

# A release's files in dist/ (README, "Releases"): swiftpush-$(VERSION).tar.gz (the
# source, git archive), the wheel, the .deb, swiftpush-$(VERSION)-linux-<arch>.tar.gz (library,
# header, .pc, command, man page, completions, LICENSE, NOTICE) and SHA256SUMS of the four.
dist: release wheel deb
	bash scripts/build-dist.sh $(RELEASE_DIR) dist

test-dist: dist pki
	$(IN_OWN_GROUP) bash Tests/dist/run.sh $(RELEASE_DIR) dist

clean:
	rm -rf .build .build-* out dist
