# lanes - the commands a newcomer needs. Everything real lives in CMake;
# this file only chains the steps. See README.md.
#
#   make          build (build/)
#   make test     install missing Debian/npm packages, build the plain,
#                 TSan and ASan+UBSan trees, start redis-server on a free
#                 loopback port, run every test in one CTest run
#   make demo     install what is missing, build, rerun the experiments
#                 quickly and print the figures
#   make bench    the same at full size, into results/
#   make install  install the library, headers, pkg-config file and CLI

JOBS     ?= 2
BUILD    ?= build
PREFIX   ?= /usr/local
CMAKE    ?= cmake
WERROR   ?= ON

CONFIG = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLN_WERROR=$(WERROR)

.PHONY: all deps test demo bench install clean format

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
	$(CMAKE) -S . -B $(BUILD) $(CONFIG) \
	  "-DLN_SANITIZER_DIRS=tsan=$(CURDIR)/build-tsan;asan=$(CURDIR)/build-asan" >/dev/null
	$(CMAKE) --build $(BUILD) -j$(JOBS)
	scripts/with-services.sh ctest --test-dir $(BUILD) -j$(JOBS) --output-on-failure

demo: deps
	$(MAKE) all
	scripts/demo.sh $(BUILD)

bench: deps
	$(MAKE) all
	scripts/bench.sh $(BUILD)

install: all
	$(CMAKE) --install $(BUILD)

format:
	clang-format -i include/*.h include/lanes/*.h src/*.c src/*.h src/*/*.c src/*/*.h \
	  tests/*.c tests/*.h bench/*.c cli/*.c 2>/dev/null || true

clean:
	rm -rf build build-tsan build-asan
