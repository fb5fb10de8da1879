# joulestat: the two commands users need are `make demo` and `make test`.
# Everything else is CMake + Ninja + CTest underneath.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?=
# CI builds with -Werror; users get warnings only.
ifeq ($(CI),true)
WERROR := ON
else
WERROR ?= OFF
endif

DEMO_SCENARIO ?= scenarios/dcgm-three-pods.scn
DEMO_LISTEN   ?= 127.0.0.1:9400

.PHONY: all deps build build-asan test test-main test-asan lint format demo bench clean

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DJOULESTAT_WERROR=$(WERROR) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DJOULESTAT_WERROR=$(WERROR) -DJOULESTAT_SANITIZE=address,undefined $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

lint: deps
	@scripts/check-format

# Sanitizer build first, the main build last, so the output ends with CTest's summary.
test: lint test-asan test-main

test-asan: build-asan
	@echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer"
	@ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1 \
	 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE 'slow|valgrind'

test-main: build
	@echo "== tests (gcc build, valgrind on unit tests)"
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

demo: build
	@scripts/demo $(BUILD) $(DEMO_SCENARIO) $(DEMO_LISTEN)

# Release build in build-bench/, the synthetic node, node_exporter beside it; rewrites
# docs/PERFORMANCE.md (about 10 minutes).
bench: deps
	@bench/run

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
