# lanes - the commands a newcomer needs. Everything real lives in CMake;
# this file only chains the steps. See README.md.
#
#   make          build (build/)
#   make test     install missing Debian/npm packages, build the plain,
#                 TSan and ASan+UBSan trees (the sanitizer trees with the
#                 debug checks, LN_DEBUG) and the fuzz targets (build-fuzz,
#                 clang's libFuzzer), start redis-server on a free
#                 loopback port, run every test in one CTest run (the
#                 format check and the install test included)
#   make demo     install what is missing, build (output in
#                 build/demo-build.log), show the pool, a job, a flow, the
#                 dashboard and the experiments' quick figures (scripts/demo.sh)
#   make bench    the same at full size, into results/
#   make install  install liblanes and liblanes-jobs, the headers, lanes.pc,
#                 lanes-jobs.pc and the `lanes` command (PREFIX=/usr/local);
#                 a PREFIX outside the loader's directories gets an rpath
#                 in the .pc files, a system one runs ldconfig as root
#                 (docs/build.md); also the man pages and the bash and zsh
#                 completion of `lanes`
#   make uninstall  remove what the last `make install` put (the files
#                 build/install_manifest.txt lists; ldconfig as install)
#   make format   apply .clang-format to the files `make test` checks
#                 (scripts/check-format.sh)

JOBS     ?= 2
BUILD    ?= build
PREFIX   ?= /usr/local
CMAKE    ?= cmake
WERROR   ?= ON

CONFIG = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLN_WERROR=$(WERROR)

.PHONY: all deps test demo bench install uninstall clean format

all:
	$(CMAKE) -S . -B $(BUILD) $(CONFIG) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	$(CMAKE) --build $(BUILD) -j$(JOBS)

deps:
	scripts/install-deps.sh

test: deps
	$(CMAKE) -S . -B build-tsan $(CONFIG) -DLN_TSAN=ON >/dev/null
	$(CMAKE) --build build-tsan -j$(JOBS)
	$(CMAKE) -S . -B build-asan $(CONFIG) -DLN_ASAN=ON -DLN_UBSAN=ON >/dev/null
	$(CMAKE) --build build-asan -j$(JOBS)
	if command -v clang >/dev/null 2>&1; then \
	  $(CMAKE) -S . -B build-fuzz $(CONFIG) -DCMAKE_C_COMPILER=clang -DLN_ASAN=ON -DLN_UBSAN=ON \
	    -DLN_FUZZ=ON >/dev/null && $(CMAKE) --build build-fuzz -j$(JOBS) --target ln_fuzz; \
	else echo "clang not found: the fuzz tests (tests/fuzz.cmake) will skip;" \
	  "the run fails unless LANES_ALLOW_SKIP names fuzz"; fi
	$(CMAKE) -S . -B $(BUILD) $(CONFIG) -DLN_FUZZ_DIR=$(CURDIR)/build-fuzz \
	  "-DLN_SANITIZER_DIRS=tsan=$(CURDIR)/build-tsan;asan=$(CURDIR)/build-asan" >/dev/null
	$(CMAKE) --build $(BUILD) -j$(JOBS)
	scripts/with-services.sh scripts/run-tests.sh --test-dir $(BUILD) -j$(JOBS) --output-on-failure

demo: deps
	@mkdir -p $(BUILD)
	@echo "make demo: building into $(BUILD)/ (the build's output: $(BUILD)/demo-build.log)"
	@$(MAKE) --no-print-directory all >$(BUILD)/demo-build.log 2>&1 || { tail -n 20 \
	  $(BUILD)/demo-build.log; echo "make demo: the build failed: $(BUILD)/demo-build.log"; exit 1; }
	@scripts/demo.sh $(BUILD)

bench: deps
	$(MAKE) all
	scripts/bench.sh $(BUILD)

install: all
	$(CMAKE) --install $(BUILD)

uninstall:
	$(CMAKE) -DMANIFEST=$(abspath $(BUILD))/install_manifest.txt -P cmake/uninstall.cmake

format:
	scripts/check-format.sh --fix

clean:
	rm -rf build build-tsan build-asan build-fuzz
