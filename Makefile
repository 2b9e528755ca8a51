# colltune build. `make` builds ./colltune, `make test` builds and runs every test
# (then again under ASan+UBSan), `make bench` runs the benchmark.
# Missing Debian/Ubuntu packages are installed by scripts/deps.sh on first use.

PREFIX ?= /usr/local
CC ?= cc
BUILD ?= build
V ?= 0

DEPS_STAMP := $(BUILD)/.deps-ok

# On a fresh machine, install the packages before anything is detected or built, so that
# `make` alone does all the set-up (skipped for `make clean`).
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(DEPS_STAMP)),)
DEPS_RC := $(shell scripts/deps.sh >&2; rc=$$?; [ $$rc = 0 ] && mkdir -p $(BUILD) && touch $(DEPS_STAMP); echo $$rc)
ifneq ($(DEPS_RC),0)
$(error scripts/deps.sh could not install the build dependencies (see above))
endif
endif
endif

# Optional packages: HAVE_<NAME> when pkg-config finds them.
have = $(shell pkg-config --exists $(1) 2>/dev/null && echo 1)
define pkgflags
ifeq ($(call have,$(1)),1)
  HAVE_FLAGS += -DHAVE_$(2)=1
  PKG_CFLAGS += $$(shell pkg-config --cflags $(1))
  PKG_LIBS += $$(shell pkg-config --libs $(1))
endif
endef
$(eval $(call pkgflags,hwloc,HWLOC))
$(eval $(call pkgflags,ncursesw,NCURSES))
$(eval $(call pkgflags,libcurl,CURL))
$(eval $(call pkgflags,jansson,JANSSON))
# libfabric: headers only; the library is dlopen'ed when the fabric transport is used
ifeq ($(call have,libfabric),1)
  HAVE_FLAGS += -DHAVE_LIBFABRIC=1
  PKG_CFLAGS += $(shell pkg-config --cflags libfabric)
endif
$(eval $(call pkgflags,libibverbs,IBVERBS))
# PMIx: headers only; libpmix.so.2 is dlopen'ed when the pmix bootstrap runs (transport/
# boot_pmix.c), not linked: an Open MPI 5 engine module loads its own libpmix.so.2 in the rank
ifeq ($(call have,pmix),1)
  HAVE_FLAGS += -DHAVE_PMIX=1 -DCT_PMIX_LIBDIR='"$(shell pkg-config --variable=libdir pmix)"'
  PKG_CFLAGS += $(shell pkg-config --cflags pmix)
endif

CUDA_HOME ?= /usr/local/cuda
ifneq ($(wildcard $(CUDA_HOME)/include/cuda_runtime.h),)
  HAVE_FLAGS += -DHAVE_CUDA_HEADERS=1
endif

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

CSTD := -std=c17 -D_GNU_SOURCE
WARN := -Wall -Wextra -Werror -Wno-unused-parameter
OPT ?= -O2 -g
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) $(HAVE_FLAGS) $(PKG_CFLAGS) -MMD -MP $(EXTRA_CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -ldl -lpthread -lm -lrt $(EXTRA_LDFLAGS)

LIB_DIRS := lib device transport algos backend tune validate monitor model probe output tui
# plugin/nccl_rules.c: the tuner plugin's config reader, also used by export (nccl-plugin)
LIB_SRC := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)) plugin/nccl_rules.c
CMD_SRC := $(wildcard cmd/*.c)
# model presets (data files with their sources) compiled into the binary
PRESETS := $(sort $(wildcard model/presets/*.json))
PRESETS_C := $(BUILD)/gen/model_presets.c
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/model_presets.o $(BUILD)/gen/cuda_kernels.o
CMD_OBJ := $(CMD_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/help.o $(BUILD)/gen/version.o
LIBA := $(BUILD)/libcolltune.a
PLUGIN_SO := $(BUILD)/libnccl-tuner-colltune.so
PLUGIN_SRC := $(wildcard plugin/*.c)

TEST_SRC := $(wildcard tests/unit/*.c tests/algos/*.c tests/transport/*.c tests/probe/*.c \
                       tests/backend/*.c tests/tune/*.c tests/validate/*.c tests/output/*.c \
                       tests/tui/*.c tests/export/*.c tests/model/*.c tests/plugin/*.c \
                       tests/device/*.c)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))

ifeq ($(V),0)
Q := @
endif
NPROC := $(shell nproc 2>/dev/null || echo 2)

.PHONY: FORCE all deps test test-unit test-gpu test-cli test-asan bench install clean check-format format check-layers \
        wan-tools lib-modules asan-build test-bins \
        regen-golden
all: colltune $(PLUGIN_SO) lib-modules

# Library engine modules (backend/lib/): each built by its library's own mpicc when that
# compiler is present, loaded by colltune with dlopen (the binary links no MPI).
MPICC_ompi := mpicc.openmpi
MPICC_mpich := mpicc.mpich
MOD_COMMON := backend/lib/mpi_mod.c backend/verify.c algos/types.c algos/reduce.c lib/memnt.c \
  lib/err.c
# MPICH's module reads its selection files with jansson before MPI_Init
MOD_LIBS_mpich := $(shell pkg-config --libs jansson 2>/dev/null)
LIB_MODS := $(foreach l,ompi mpich,$(if $(wildcard backend/lib/$(l)_mod.c),$(if $(shell command -v $(MPICC_$(l)) 2>/dev/null),$(BUILD)/ct-lib-$(l).so)))
$(BUILD)/ct-lib-%.so: backend/lib/%_mod.c $(MOD_COMMON) Makefile
	@mkdir -p $(dir $@)
	@echo "  MPICC   $@"
	$(Q)$(MPICC_$*) $(CSTD) $(OPT) $(WARN) -shared -fPIC -fvisibility=hidden -o $@ $< $(MOD_COMMON) $(MOD_LIBS_$*)
	$(Q)$(MPICC_$*) $(CSTD) -MM -MP -MT $@ $< $(MOD_COMMON) >$(@:.so=.d)
# every header its sources include, as the compiler found them (a list kept by hand missed
# libmod.h, whose ABI number then stayed the old one in a module rebuilt by `make`)
-include $(LIB_MODS:.so=.d)
# Open MPI's coll/base spy (backend/lib/ompi_spy.c): which algorithm a call ran, for the
# sweep's engine and the tests; without -fvisibility=hidden, its wrappers must be seen.
LIB_SPY := $(if $(filter %/ct-lib-ompi.so,$(LIB_MODS)),$(BUILD)/ct-spy-ompi.so)
$(BUILD)/ct-spy-ompi.so: backend/lib/ompi_spy.c
	@mkdir -p $(dir $@)
	@echo "  MPICC   $@"
	$(Q)$(MPICC_ompi) $(CSTD) $(OPT) $(WARN) -shared -fPIC -o $@ $< -ldl
lib-modules: $(LIB_MODS) $(LIB_SPY)

# t3100's MPICH spy build: MPICH's algorithm functions are internal to libmpich.so, and its
# static archive cannot go into a shared module (initial-exec TLS). So a copy of colltune is
# linked with MPICH's engine (its symbols made local, its entry point renamed), libmpich.a
# and tests/cli/consumers/mpich_spy.c, every algorithm -Wl,--wrap'ed; its ct-lib-mpich.so
# hands over to the engine inside (tests/cli/consumers/mod_forward.c). Tests only: a sweep
# measures the libmpich.so that jobs load. libmpich.a carries json-c, whose json_object_get
# and json_object_iter_next are also jansson's (colltune's): in a copy of the archive every
# such name is renamed, or the binary's jansson calls would run json-c's functions.
MPICH_A := $(if $(filter %/ct-lib-mpich.so,$(LIB_MODS)),$(wildcard $(shell pkg-config --variable=libdir mpich 2>/dev/null)/libmpich.a))
MPICH_SPY := $(if $(MPICH_A),$(BUILD)/tests/mpich-spy/colltune)
MSPY_SRC := tests/cli/consumers/mpich_spy.c
-include $(if $(MPICH_SPY),$(dir $(MPICH_SPY))colltune.d)
$(BUILD)/tests/mpich-spy/colltune: $(CMD_OBJ) $(LIBA) backend/lib/mpich_mod.c $(MOD_COMMON) \
  $(MSPY_SRC) tests/cli/consumers/mod_forward.c Makefile
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (with $(MPICH_A))"
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) $$(pkg-config --cflags mpich) -fvisibility=hidden -r -nostdlib \
	  -o $(dir $@)mod.o backend/lib/mpich_mod.c $(MOD_COMMON)
	$(Q)$(CC) $(CSTD) $$(pkg-config --cflags mpich) -MM -MP -MT $@ backend/lib/mpich_mod.c \
	  $(MOD_COMMON) $(MSPY_SRC) >$(dir $@)colltune.d
	$(Q)objcopy --localize-hidden --redefine-sym ct_libmod_entry=ct_mpich_spy_entry $(dir $@)mod.o
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) -DCT_SHIM_LOG $$(pkg-config --cflags mpich) -c \
	  -o $(dir $@)spy.o $(MSPY_SRC)
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) -shared -fPIC -o $(dir $@)ct-lib-mpich.so \
	  tests/cli/consumers/mod_forward.c -ldl
	$(Q)nm -D $$(pkg-config --variable=libdir jansson)/libjansson.so | \
	  awk '$$2 == "T" { sub(/@.*/, "", $$3); print $$3 }' | sort -u >$(dir $@)jansson.syms
	$(Q)objcopy $$(nm $(MPICH_A) 2>/dev/null | awk '$$2 == "T" { print $$3 }' | sort -u | \
	  comm -12 - $(dir $@)jansson.syms | sed 's/.*/--redefine-sym &=mpich_json_c_&/') \
	  $(MPICH_A) $(dir $@)libmpich.a
	$(Q)$(CC) $(OPT) -no-pie -o $@ $(CMD_OBJ) $(dir $@)mod.o $(dir $@)spy.o $(LIBA) \
	  $$(sed -n 's/^WRAP(\([A-Za-z_]*\),.*/-Wl,--wrap=\1/p' $(MSPY_SRC)) \
	  -Wl,--export-dynamic-symbol=ct_mpich_spy_entry -Wl,--export-dynamic-symbol=colltune_shim_last \
	  $(dir $@)libmpich.a \
	  $$(pkg-config --static --libs-only-l mpich | sed 's/-lmpich\b//') $(LDLIBS_ALL)

deps:
	$(Q)scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# Subcommand help texts: cmd/help/*.txt -> C strings.
$(BUILD)/gen/help.c: $(wildcard cmd/help/*.txt) scripts/gen-help.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/gen-help.sh cmd/help > $@

$(BUILD)/gen/help.o: $(BUILD)/gen/help.c
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# The version, in one object rewritten only when `git describe` changes (a -D on every
# object left each with the version of the build that last compiled it).
VERSION_LINE := const char *ct_version(void) { return "0.1.0-$(VERSION)"; }
$(BUILD)/gen/version.c: FORCE
	@mkdir -p $(dir $@)
	$(Q)if [ "$$(cat $@ 2>/dev/null)" != '$(VERSION_LINE)' ]; then echo '$(VERSION_LINE)' > $@; fi
FORCE:

$(BUILD)/gen/version.o: $(BUILD)/gen/version.c
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(PRESETS_C): $(PRESETS) scripts/embed-presets.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/embed-presets.sh $@ $(PRESETS)

# GPU reduction kernels (device/kernels.cu) as a fatbin carried as data; empty without nvcc.
NVCC ?= $(CUDA_HOME)/bin/nvcc
$(BUILD)/gen/cuda_kernels.c: device/kernels.cu scripts/embed-fatbin.sh
	@mkdir -p $(dir $@)
	@echo "  NVCC    $<"
	$(Q)scripts/embed-fatbin.sh $@ $< $(NVCC)

$(BUILD)/gen/cuda_kernels.o: $(BUILD)/gen/cuda_kernels.c
	$(Q)$(CC) $(CFLAGS_ALL) -Wno-missing-braces -c $< -o $@

$(BUILD)/gen/model_presets.o: $(PRESETS_C)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIBA): $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# colltune's NCCL tuner plugin (plugin/): a shared library NCCL dlopens; C and jansson only,
# no CUDA or NCCL needed to build it (the tuner ABI is restated in plugin/nccl_tuner_abi.h).
$(PLUGIN_SO): $(PLUGIN_SRC) $(wildcard plugin/*.h)
	@mkdir -p $(dir $@)
	@echo "  SO      $@"
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) -fPIC -shared -fvisibility=hidden $(EXTRA_CFLAGS) \
	  $$(pkg-config --cflags jansson) -o $@ $(PLUGIN_SRC) $$(pkg-config --libs jansson) $(EXTRA_LDFLAGS)

colltune: $(BUILD)/colltune
	$(Q)cp $< $@

$(BUILD)/colltune: $(CMD_OBJ) $(LIBA)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $(CMD_OBJ) $(LIBA) $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c $(LIBA) $(wildcard tests/*.h tests/*/*.h)
	@mkdir -p $(dir $@)
	@echo "  TEST-CC $<"
	$(Q)$(CC) $(CFLAGS_ALL) -DCT_BUILD_DIR=\"$(BUILD)\" -I. $(TEST_CFLAGS) -o $@ $< $(LIBA) $(LDLIBS_ALL) -lcriterion

# backend/nccl_abi.h against the installed nccl.h, where there is one
ifneq ($(wildcard $(CUDA_HOME)/include/nccl.h),)
$(BUILD)/tests/backend/test_nccl_abi: TEST_CFLAGS = -DHAVE_NCCL_H=1 -I$(CUDA_HOME)/include
endif

# The plugin's ABI harness (and the NCCL engine's forcing test) dlopen the built plugin.
$(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/plugin/*.c)) $(BUILD)/tests/backend/test_nccl: $(PLUGIN_SO)

# Stand-alone test tools (no library, no Criterion): the WAN delay line and its checks.
WAN_TOOLS := $(BUILD)/tests/wan/delayline $(BUILD)/tests/wan/pingpong
$(BUILD)/tests/wan/%: tests/wan/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) -o $@ $<
wan-tools: $(WAN_TOOLS)

# Every Criterion binary, then the CLI scripts. Failing tests fail the target.
test-unit: $(TEST_BIN) colltune $(PLUGIN_SO)
	$(Q)scripts/run-tests.sh $(BUILD) $(TEST_BIN)

# The GPU tests (Criterion suite gpu): run where a GPU is, each SKIP with its reason elsewhere.
GPU_TEST_BIN := $(BUILD)/tests/device/test_device $(BUILD)/tests/backend/test_nccl \
  $(BUILD)/tests/backend/test_staged $(BUILD)/tests/validate/test_validate
test-gpu: $(GPU_TEST_BIN) colltune
	$(Q)CRITERION_TEST_PATTERN='gpu/*' scripts/run-tests.sh $(BUILD) $(GPU_TEST_BIN)

test-cli: colltune lib-modules $(PLUGIN_SO) $(WAN_TOOLS) $(MPICH_SPY)
	$(Q)scripts/run-cli-tests.sh ./colltune

# Same tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/.
ASAN_MAKE = $(MAKE) --no-print-directory BUILD=build-asan \
  OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
  EXTRA_LDFLAGS="-fsanitize=address,undefined"
test-asan: asan-build
	$(Q)$(ASAN_MAKE) test-unit-asan
asan-build:
	$(Q)$(ASAN_MAKE) -j$(NPROC) test-bins
# What the Criterion tests need, built in parallel (scripts/run-tests.sh then runs two
# binaries at a time).
test-bins: $(TEST_BIN) $(BUILD)/colltune $(PLUGIN_SO)

test-unit-asan: $(TEST_BIN) $(BUILD)/colltune $(PLUGIN_SO)
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  scripts/run-tests.sh $(BUILD) $(TEST_BIN)

# The layout's rules: includes flow downward, no output below cmd/tui/output, cmd files
# under 250 lines, no call circles between files (scripts/check-layers.py).
check-layers: colltune
	$(Q)python3 scripts/check-layers.py $(BUILD)

# Everything builds with one job per core; the ASan build runs at nice 19 while the tests run
# (they leave a core idle most of the time), its output in build-asan/make.log.
test:
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) check-layers test-bins lib-modules $(WAN_TOOLS) $(MPICH_SPY)
	$(Q)scripts/overlap.sh build-asan/make.log "$(MAKE) --no-print-directory asan-build" \
	  $(MAKE) --no-print-directory test-unit test-cli
	$(Q)$(MAKE) --no-print-directory test-asan

bench: colltune lib-modules $(WAN_TOOLS)
	$(Q)tests/bench/run.sh

install: colltune $(PLUGIN_SO) lib-modules
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/lib/colltune
	install -m 755 colltune $(DESTDIR)$(PREFIX)/bin/colltune
	install -m 755 $(PLUGIN_SO) $(DESTDIR)$(PREFIX)/lib/colltune/libnccl-tuner-colltune.so
	$(if $(LIB_MODS)$(LIB_SPY),install -m 755 $(LIB_MODS) $(LIB_SPY) $(DESTDIR)$(PREFIX)/lib/colltune/)
	install -m 644 man/colltune.1 $(DESTDIR)$(PREFIX)/share/man/man1/colltune.1

# Golden files change only through this target; review the diff.
regen-golden: $(TEST_BIN)
	$(Q)scripts/regen-golden.sh $(BUILD)

check-format:
	clang-format --dry-run -Werror $(LIB_SRC) $(CMD_SRC)

format:
	clang-format -i $(LIB_SRC) $(CMD_SRC) $(wildcard */*.h)

clean:
	rm -rf build build-asan colltune

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d)
