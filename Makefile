# Makefile: builds tachyon-bpf (BPF object embedded through a libbpf skeleton)
# and the cmocka unit tests; `make test` runs every test (scripts/test.sh).
#
# The agent's sources live in one folder per layer (docs/architecture.md):
# user/lib, proc, cpython, model, capture, output, cmd.  Objects go to
# build/<layer>/; dependencies come from the compiler (-MMD).  Only the
# sampler includes the BPF skeleton, so everything else (and the unit tests,
# which link build/libtachyon.a) builds without clang, bpftool or vmlinux.h.
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
CFLAGS   ?= -O2 -g
override CFLAGS += -Wall -Wextra -std=gnu11 -Iinclude -Iuser -MMD -MP
LDLIBS   := -lbpf -ldw -lelf -lz -lm
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Wextra -Wno-unused-parameter \
	-Ivmlinux -Iinclude -I/usr/include/x86_64-linux-gnu

# B: the build directory (tests/fuzz/run.sh builds sanitized objects in build/fuzz)
B        ?= build
LAYERS   := lib proc cpython model capture output cmd
SRC      := $(foreach l,$(LAYERS),$(wildcard user/$(l)/*.c))
OBJ      := $(patsubst user/%.c,$(B)/%.o,$(SRC))
SKEL_OBJ := $(B)/capture/sampler.o
MAIN_OBJ := $(B)/cmd/main.o
# everything but main() and the BPF loader: what the unit tests and fuzzers link
LIB_OBJ  := $(filter-out $(SKEL_OBJ) $(MAIN_OBJ),$(OBJ)) $(B)/output/assets.o
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

.PHONY: all clean test unit lib print-ldlibs vmlinux bench layers FORCE
all: tachyon-bpf

$(B)/tachyon.bpf.o: bpf/tachyon.bpf.c $(wildcard bpf/arch/*.h) include/tachyon.h vmlinux/vmlinux.h scripts/check_bpf_cfg.py
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	python3 scripts/check_bpf_cfg.py $@ || { rm -f $@; exit 1; }
	llvm-strip -g $@

$(B)/tachyon.skel.h: $(B)/tachyon.bpf.o
	$(BPFTOOL) gen skeleton $< name tachyon_bpf > $@

$(B)/%.o: user/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(SKEL_OBJ): override CFLAGS += -I$(B)
$(SKEL_OBJ): $(B)/tachyon.skel.h

# what --version prints: git describe at build time (VERSION=... overrides);
# version.h is rewritten only when it changes, so main.o rebuilds only then
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(B)/version.h: FORCE
	@mkdir -p $(@D)
	@echo '#define TB_VERSION "$(VERSION)"' | cmp -s - $@ || echo '#define TB_VERSION "$(VERSION)"' > $@
$(MAIN_OBJ): override CFLAGS += -I$(B)
$(MAIN_OBJ): $(B)/version.h

$(B)/output/assets.o: user/output/assets.S $(wildcard user/output/assets/*)
	@mkdir -p $(@D)
	$(CC) -c $< -o $@

$(B)/libtachyon.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

lib: $(B)/libtachyon.a

# the libraries libtachyon.a needs, for links outside this file (tests/fuzz, tests/hostile/flood.sh, tests/pythreads, tests/unwind, bench)
print-ldlibs:
	@echo $(LDLIBS)

tachyon-bpf: $(MAIN_OBJ) $(SKEL_OBJ) $(B)/libtachyon.a
	$(CC) $(CFLAGS) -o $@ $(MAIN_OBJ) $(SKEL_OBJ) $(B)/libtachyon.a $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libtachyon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libtachyon.a $(LDLIBS) -lcmocka

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

# includes point only down the layers (docs/architecture.md)
layers:
	@python3 scripts/check_layers.py

# every test, as CI runs it (installs what it needs; root)
test:
	bash scripts/test.sh

bench: tachyon-bpf
	@bash bench/run.sh

# Regenerate vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

clean:
	rm -rf build tachyon-bpf

-include $(OBJ:.o=.d) $(UNIT_BIN:=.d)
