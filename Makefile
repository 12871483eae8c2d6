# seedpipe - one non-recursive Makefile.
#
#   make            build every tool into bin/
#   make check      run the TAP suite with prove (T='t/t0*' for a subset)
#   make asan       build and test with AddressSanitizer + UBSan (in build-asan/)
#   make tsan-check build with ThreadSanitizer (in build-tsan/) and run every
#                   threaded tool with several threads on small inputs (t/tsan.sh)
#   make deps       apt-get install only the missing Debian packages
#   make demo       run the bundled example
#   make install    PREFIX=/usr/local DESTDIR=
#   make bench      run the benchmarks in bench/ (not part of CI)
#   make fuzz       run each fuzz target of fuzz/ for FUZZ_TIME seconds
#                   (libFuzzer, clang; see fuzz/fuzz.h)
#   make workflow-check  start a single-node Slurm cluster on this machine (as
#                   root), run workflow/Snakefile through it and the local
#                   profile, compare with a single-machine run (t/t911*.sh)
#
# Everything is found by wildcard: common/*.c is the library, tools/NAME.c is
# a program (tools/NAME_PART.c a part of it), t/unit/NAME.c a C unit test printing TAP, kernels/*.cl are
# embedded into the library at build time.

CC       ?= cc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -pthread -fno-strict-aliasing
CPPFLAGS += -D_GNU_SOURCE -Icommon -Ikernels -I$(B) -DCL_TARGET_OPENCL_VERSION=120
LDFLAGS  += -pthread
LIBS     += -lOpenCL -lhts -lz -lxxhash -ldivsufsort -ldivsufsort64 -lm
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
PROVE    ?= prove
T        ?= t/t[0-9]*.sh

ifeq ($(WERROR),1)
CFLAGS += -Werror
endif

# Build directory: build/ normally, build-asan/ for the sanitizer build.
B        ?= build
BIN      ?= bin

LIB_SRC   := $(wildcard common/*.c)
# tools/NAME_PART.c is a part of tool NAME, linked into it (not a tool of its own)
TOOL_PART := $(wildcard tools/*_*.c)
TOOL_SRC  := $(filter-out $(TOOL_PART),$(wildcard tools/*.c))
UNIT_SRC  := $(wildcard t/unit/*.c)
FUZZ_SRC  := $(filter-out fuzz/replay.c,$(wildcard fuzz/*.c))
KERNELS   := $(wildcard kernels/*.cl)
KINC      := $(wildcard kernels/inc_*.h)
MANPAGES  := $(wildcard man/*.[157])

LIB_OBJ   := $(patsubst common/%.c,$(B)/common/%.o,$(LIB_SRC)) $(B)/kernels_embed.o
TOOLS     := $(patsubst tools/%.c,$(BIN)/%,$(TOOL_SRC))
UNITS     := $(patsubst t/unit/%.c,$(B)/t/%,$(UNIT_SRC))
REPLAYS   := $(patsubst fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
LIBA      := $(B)/libseedpipe.a

.PHONY: all check asan asan-check tsan tsan-check deps demo install uninstall clean bench units fuzz fuzz-build \
	workflow-check
.DELETE_ON_ERROR:

all: $(TOOLS) $(UNITS) $(REPLAYS)

units: $(UNITS)

$(B)/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/tools/%.o: tools/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/t/%.o: t/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# Kernel sources (with their inc_*.h headers inlined) become C strings.
$(B)/kernels_embed.c: $(KERNELS) $(KINC) build-aux/embed.sh
	@mkdir -p $(@D)
	sh build-aux/embed.sh $(KERNELS) > $@.tmp && mv $@.tmp $@

# A unit test's kernels (t/unit/NAME.cl, headers from kernels/) become the
# string NAME_cl of $(B)/t/NAME_cl.h, which t/unit/NAME.c includes.
$(B)/t/%_cl.h: t/unit/%.cl $(KINC) build-aux/embed.sh
	@mkdir -p $(@D)
	sh build-aux/embed.sh -v $*_cl kernels $< > $@.tmp && mv $@.tmp $@

$(foreach c,$(wildcard t/unit/*.cl),$(eval $(B)/t/$(notdir $(basename $(c))).o: \
	$(B)/t/$(notdir $(basename $(c)))_cl.h))

$(B)/kernels_embed.o: $(B)/kernels_embed.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# tools/NAME_PART.c is a part of program NAME (e.g. extend_global.c of extend)
$(foreach p,$(TOOL_PART),$(eval $(BIN)/$(firstword $(subst _, ,$(notdir $(basename $(p))))): \
	$(patsubst tools/%.c,$(B)/tools/%.o,$(p))))

$(BIN)/%: $(B)/tools/%.o $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBA) $(LIBS)

$(B)/t/%: $(B)/t/%.o $(LIBA)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

# The fuzz targets as replay programs (fuzz/replay.c is their main): make
# check runs fuzz/regress/ through them.
$(B)/fuzz/%.o: fuzz/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ifuzz $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/fuzz/%: $(B)/fuzz/%.o $(B)/fuzz/replay.o $(LIBA)
	$(CC) $(LDFLAGS) -o $@ $< $(B)/fuzz/replay.o $(LIBA) $(LIBS)

# libFuzzer builds: the library and every target with clang, the sanitizers
# and the two fuzzing switches (fuzz/fuzz.h), in build-fuzz/.  make fuzz
# runs each target for FUZZ_TIME seconds (FUZZ_TARGETS: a subset) on its
# corpus in build-fuzz/corpus/, seeded by fuzz/seeds.sh from the test data.
FUZZ_CC      ?= clang
FUZZ_TIME    ?= 60
FUZZ_B       := build-fuzz
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link -DSP_FUZZ -DSP_FUZZ_NO_CHECKSUM
FUZZ_TARGETS ?= $(patsubst fuzz/%.c,%,$(FUZZ_SRC))

ifneq ($(B),$(FUZZ_B))
$(FUZZ_B)/libseedpipe.a: FORCE
	$(MAKE) B=$(FUZZ_B) CC=$(FUZZ_CC) CFLAGS='$(FUZZ_CFLAGS) -std=gnu11 -pthread' $@
endif

$(FUZZ_B)/bin/%: fuzz/%.c fuzz/*.h $(FUZZ_B)/libseedpipe.a
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -Ifuzz $(FUZZ_CFLAGS) -std=gnu11 -pthread -fsanitize=fuzzer \
		-o $@ $< $(FUZZ_B)/libseedpipe.a $(LIBS)

fuzz-build: $(patsubst %,$(FUZZ_B)/bin/%,$(FUZZ_TARGETS))

fuzz: all fuzz-build
	sh fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

.PHONY: FORCE
FORCE:

# check and demo install what is missing first (make deps), so they work on a
# fresh machine as the first command run.
check: deps
	$(MAKE) all
	cd t && SEEDPIPE_BUILD=$(abspath $(B)) SEEDPIPE_BIN=$(abspath $(BIN)) \
		$(PROVE) -j2 --exec bash $(patsubst t/%,%,$(wildcard $(T)))

# Sanitizer build in its own tree so it never mixes with the normal objects.
asan:
	$(MAKE) B=build-asan BIN=build-asan/bin \
		CFLAGS='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' \
		LDFLAGS='-fsanitize=address,undefined' all

# intercept_tls_get_addr=0: LeakSanitizer's exit-time scan follows the dynamic
# TLS of dlopen'ed modules, and after PoCL has dlopen'ed and closed kernel
# libraries it read a bogus range (DTLS 0x6fc-0x18000017fe) and crashed
# ("Tracer caught signal 11"), failing t0300 every time and t2030 at times.
# Our code keeps no heap pointer only in dynamic TLS.
asan-check: deps asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0 LSAN_OPTIONS=suppressions=$(abspath t/lsan.supp):print_suppressions=0 POCL_MAX_PTHREAD_COUNT=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	$(MAKE) B=build-asan BIN=build-asan/bin \
		CFLAGS='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' \
		LDFLAGS='-fsanitize=address,undefined' check

# ThreadSanitizer build in its own tree.  tsan-check runs t/tsan.sh, which
# drives seqidx, seedfilt (native and PoCL), extend, strsort and recview with
# several threads; any report fails it (halt_on_error, exit status 66).  No
# suppressions: PoCL's threads gave no report (checked with halt_on_error=0).
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
tsan:
	$(MAKE) B=build-tsan BIN=build-tsan/bin CFLAGS='$(TSAN_FLAGS)' LDFLAGS='-fsanitize=thread' all

tsan-check: deps tsan
	cd t && TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1" \
	SEEDPIPE_BUILD=$(abspath build-tsan) SEEDPIPE_BIN=$(abspath build-tsan/bin) \
		$(PROVE) --exec bash tsan.sh

# Debian packages the build, the tests and the demo need (gawk: the tests
# use its and() on SAM flags; Debian's default awk is mawk).
DEPS_PKGS := build-essential ocl-icd-opencl-dev opencl-headers pocl-opencl-icd \
	libdivsufsort-dev libxxhash-dev libhts-dev zlib1g-dev \
	perl mandoc bsdextrautils gzip coreutils util-linux python3 \
	samtools seqtk clang libclang-rt-14-dev gawk
# ... and the workflow's (make workflow-check): Snakemake, Slurm, munge
DEPS_PKGS += slurm-wlm munge snakemake
deps:
	@sh build-aux/deps.sh $(DEPS_PKGS)

# The workflow's tests (not in make check: a Slurm cluster and Snakemake's
# job starts take minutes); each test stops the cluster it started on every
# exit path.
WORKFLOW_T ?= t/t911[0-9]-*.sh
workflow-check: deps
	$(MAKE) all
	cd t && SEEDPIPE_WORKFLOW_CHECK=1 SEEDPIPE_BUILD=$(abspath $(B)) SEEDPIPE_BIN=$(abspath $(BIN)) \
		$(PROVE) --exec bash $(patsubst t/%,%,$(wildcard $(WORKFLOW_T)))

demo: deps
	$(MAKE) all
	sh build-aux/demo.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	for m in $(MANPAGES); do s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done

uninstall:
	for t in $(notdir $(TOOLS)); do rm -f $(DESTDIR)$(BINDIR)/$$t; done
	for m in $(notdir $(MANPAGES)); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$$m; done

bench: all
	sh bench/run-all.sh

clean:
	rm -rf build build-asan build-tsan build-fuzz bin t/trash* t/test-results t/pocl-cache

-include $(wildcard $(B)/common/*.d $(B)/tools/*.d $(B)/t/*.d $(B)/fuzz/*.d)
