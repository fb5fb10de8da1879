# joulestat: the two commands users need are `make demo` and `make test`.
# Everything else is CMake + Ninja + CTest underneath.

BUILD      ?= build
ASAN_BUILD ?= build-asan
PKG_BUILD  ?= build-package
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?=
, := ,
# CI builds with -Werror; users get warnings only.
ifeq ($(CI),true)
WERROR := ON
else
WERROR ?= OFF
endif

DEMO_SCENARIO ?= scenarios/dcgm-three-pods.scn
DEMO_LISTEN   ?= 127.0.0.1:19400

# make install: PREFIX at configure time (the unit names the installed paths), DESTDIR at
# install time; INSTALL_SIM=ON adds the simulated GPU node (a private libnvidia-ml.so.1).
PREFIX      ?= /usr/local
DESTDIR     ?=
INSTALL_SIM ?= OFF

.PHONY: all deps deps-test deps-package build build-demo build-asan test test-main test-asan \
	lint format demo install package bench accuracy soak slurm-long slurm-acct clean

all: build

deps:
	@scripts/install-deps demo

deps-test:
	@scripts/install-deps demo test

deps-package:
	@scripts/install-deps demo package

configure = cmake -S . -B $(1) -G Ninja -DJOULESTAT_WERROR=$(WERROR) $(2) $(CMAKE_FLAGS) >/dev/null

build: deps-test
	@$(call configure,$(BUILD),-DJOULESTAT_TESTS=ON)
	@cmake --build $(BUILD) -j $(JOBS)

# The demo and `make install` build no tests, so they need none of the test packages.
build-demo: deps
	@$(call configure,$(BUILD),-DJOULESTAT_TESTS=OFF -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	    -DJOULESTAT_INSTALL_SIM=$(INSTALL_SIM))
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps-test
	@$(call configure,$(ASAN_BUILD),-DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DJOULESTAT_TESTS=ON -DJOULESTAT_SANITIZE=address$(,)undefined)
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

lint: deps-test
	@scripts/check-format

# Sanitizer build first, the main build last, so the output ends with CTest's summary.
# Tests labelled `once` drive external programs (Prometheus, tmux, slurmdbd) through paths
# the build flavour does not change: `make test` runs them under the sanitizers only;
# `make test-main` alone runs them too. `slow` ones run in the main build only.
test: lint test-asan test-main
test: TEST_MAIN_EXCLUDE := -LE once

test-asan: build-asan
	@echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer"
	@ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1 \
	 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE 'slow|valgrind'

test-main: build
	@echo "== tests (gcc build, valgrind on unit tests)"
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) $(TEST_MAIN_EXCLUDE)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

demo: build-demo
	@scripts/demo $(BUILD) $(DEMO_SCENARIO) $(DEMO_LISTEN)

# The binary, its man page, the systemd unit and /etc/default/joulestat (under PREFIX).
install: build-demo
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD)

# A .deb for /usr (Release build in build-package/).
package: deps-package
	@$(call configure,$(PKG_BUILD),-DCMAKE_BUILD_TYPE=Release -DJOULESTAT_TESTS=OFF \
	    -DCMAKE_INSTALL_PREFIX=/usr)
	@cmake --build $(PKG_BUILD) -j $(JOBS) --target package
	@ls $(PKG_BUILD)/*.deb

# Release build in build-bench/, the synthetic node, node_exporter beside it; rewrites
# docs/PERFORMANCE.md (about 10 minutes).
bench:
	@scripts/install-deps demo test bench
	@bench/run

# Every shipped scenario plus 32 generated mixes against the simulator's truth, beside the
# baselines users would otherwise pick, again with the driver's 100 ms grid at four phases
# against the ticks, and 90 mixes from seeds the split was never developed against,
# summarised apart; rewrites docs/ACCURACY.md and docs/accuracy.png.
UNSEEN_SEED = 60000
accuracy: build-demo
	@scripts/install-deps accuracy
	@rm -rf $(BUILD)/mixes && scripts/gen-mixes --count 32 $(BUILD)/mixes
	@rm -rf $(BUILD)/mixes-unseen && \
	    scripts/gen-mixes --count 90 --seed $(UNSEEN_SEED) $(BUILD)/mixes-unseen
	@scripts/accuracy-report --joulestat $(BUILD)/joulestat --jobs $(JOBS) \
	    --markdown docs/ACCURACY.md --chart docs/accuracy.png --phases 0,25,50,75 \
	    --idle-scales 0.85,1.15 \
	    scenarios/*.scn $(BUILD)/mixes/*.scn \
	    --unseen-command "scripts/gen-mixes --count 90 --seed $(UNSEEN_SEED)" \
	    --unseen $(BUILD)/mixes-unseen/*.scn

# The simulated 8-GPU node over HTTPS with auth for 5 minutes under 50 scrapers at 10 Hz,
# 300 idle and 60 slow connections and wrong passwords; writes its figures into
# docs/PERFORMANCE.md ("Soak"). Not part of `make test`.
soak: build
	@scripts/soak $(BUILD)

# SLURM checks too long for `make test` (root, Debian's slurm-wlm; docs/SLURM.md):
# slurm-long: the last-joule test with a 60 s job beside the 2 s and 8 s ones;
# slurm-acct: slurmdbd on MariaDB, jobs' energy from joulestat in `sacct`.
slurm-long: build
	@tests/slurm/slurm-last-joule.sh $(BUILD) . 60

slurm-acct: build
	@scripts/install-deps slurm-acct
	@tests/slurm/slurm-acct.sh $(BUILD) .

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(PKG_BUILD)
