# swiftpush: the two commands a newcomer needs are `make demo` and `make test`.
#   make demo       build (release), start the mock APNs server, send 100,000 notifications
#                   through libswiftpush.so from C, print throughput and outcomes
#   make test       every test: Swift unit + mock tests, header checks, C ABI end-to-end tests,
#                   the Redis Streams worker end to end (make test-worker)
#   make bench      the library against h2load on the same mock server (see README)
#   make demo-worker    Redis + mock + two workers: 100,000 notifications through the queue
#   make bench-worker   the Redis Streams worker against the raw library rate (docs/worker.md)
#   make chaos / make soak / make test-tsan   long reliability runs (not part of make test)
#   make header     regenerate Include/swiftpush.h from the Swift exports
#   make generate   regenerate the enums from Tables/*.tsv
# Each target installs missing Debian packages itself (scripts/install-deps.sh).

SWIFT        ?= swift
DEBUG_DIR    := .build/debug
RELEASE_SCRATCH := .build-release
RELEASE_DIR  := $(RELEASE_SCRATCH)/release
PKI          := .build-pki
PREFIX       ?= /usr/local
VERSION      := $(shell sed -n 's/^#define PUSH_VERSION_STRING "\(.*\)"/\1/p' Include/swiftpush.h)
# Release artifacts carry the Swift runtime inside (no toolchain needed to use them).
RELEASE_FLAGS := -c release --scratch-path $(RELEASE_SCRATCH) -Xswiftc -static-stdlib -Xswiftc -gnone

.PHONY: all deps build release header generate pki test test-swift test-header test-c test-cli test-worker test-bindings test-alloc test-install test-asan test-tsan test-fuzz memcheck chaos soak install demo bench bench-scaling bench-worker demo-worker clean

all: build

deps:
	@bash scripts/install-deps.sh

generate:
	python3 scripts/gen_tables.py

build: deps
	$(SWIFT) build --product swiftpush
	$(SWIFT) build --product swiftpush-cli

release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product swiftpush
	$(SWIFT) build $(RELEASE_FLAGS) --product swiftpush-cli

header: build
	python3 scripts/gen_header.py $(DEBUG_DIR)/SwiftPush.build/include/SwiftPush-Swift.h

pki:
	@bash scripts/make-test-pki.sh $(PKI) >/dev/null

test: build pki
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory test-swift test-header test-c test-cli test-worker test-bindings test-alloc test-install test-asan memcheck test-fuzz

test-swift:
	$(SWIFT) test --skip-build

test-header:
	bash Tests/header/check-header.sh $(DEBUG_DIR)

test-c:
	bash Tests/c/run.sh $(DEBUG_DIR)

test-cli:
	bash Tests/cli/run.sh $(DEBUG_DIR)

# The queue-fed worker against a real redis-server and the mock: 100,000 entries end to end,
# SIGKILL/restart, SIGTERM drain, bad entries, Redis restart (Tests/worker/run.sh BUILD_DIR COUNT);
# then Redis, the mock and two workers in separate network namespaces (skipped without root).
test-worker: build pki
	bash Tests/worker/run.sh $(DEBUG_DIR) 100000
	bash Tests/worker/netns.sh $(DEBUG_DIR) 20000

# Sanitizers: the end-to-end Swift suites under ASan (+UBSan for C) in make test; TSan on demand.
test-asan:
	bash scripts/sanitize.sh address

test-tsan:
	bash scripts/sanitize.sh thread

# valgrind memcheck of the C examples (send_one.c, load.c with GOAWAYs, refused streams, 503s).
memcheck: build pki
	bash scripts/memcheck.sh $(DEBUG_DIR)

# libFuzzer harnesses, 10 s each over the committed corpora (Tests/fuzz/run.sh 600 for long runs).
test-fuzz:
	bash Tests/fuzz/run.sh 10

# Long runs (not in make test): 1,000,000-notification chaos run; 5,000,000-notification soak.
chaos:
	bash Tests/chaos/run.sh 1000000

soak: release pki
	bash scripts/soak.sh $(RELEASE_DIR) 5000000

test-bindings:
	bash Bindings/run-tests.sh $(DEBUG_DIR)

# Allocation counting needs the optimized library (what users ship).
test-alloc: release
	bash Tests/perf/run.sh $(RELEASE_DIR)

demo: release pki
	bash scripts/demo.sh $(RELEASE_DIR) $(PKI)

bench: release pki
	bash scripts/bench.sh $(RELEASE_DIR) $(PKI)

bench-scaling: release pki
	bash scripts/bench-scaling.sh $(RELEASE_DIR) $(PKI)

# Redis + mock + two workers: 100,000 notifications through the queue, outcomes summed.
demo-worker: release pki
	bash scripts/demo-worker.sh $(RELEASE_DIR) $(PKI)

# The Redis Streams worker (1, then 2 workers) against the raw library rate on the same mock.
bench-worker: release pki
	bash scripts/bench-worker.sh $(RELEASE_DIR) $(PKI)

# Installs the self-contained library (Swift runtime linked in), the header and swiftpush.pc:
#   make install PREFIX=/opt/swiftpush   then   cc app.c $(pkg-config --cflags --libs swiftpush)
install: release
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(RELEASE_DIR)/libswiftpush.so $(DESTDIR)$(PREFIX)/lib/libswiftpush.so
	install -m 644 Include/swiftpush.h $(DESTDIR)$(PREFIX)/include/swiftpush.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' Bindings/c/pkgconfig/swiftpush.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/swiftpush.pc

test-install: release pki
	bash Tests/install/run.sh $(RELEASE_DIR)

clean:
	rm -rf .build .build-* out
