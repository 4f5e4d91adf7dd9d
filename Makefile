# Makefile: builds tachyon-bpf (BPF object embedded through a libbpf skeleton),
# the cmocka unit tests, and runs the test suites.
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -std=gnu11 -Iinclude -Ibuild -Iuser
LDLIBS   := -lbpf -lelf -lz -lm
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Wextra -Wno-unused-parameter \
	-Ivmlinux -Iinclude -I/usr/include/x86_64-linux-gnu

USER_SRC := $(wildcard user/*.c)
USER_OBJ := $(patsubst user/%.c,build/%.o,$(USER_SRC)) build/assets.o
LIB_OBJ  := $(filter-out build/main.o,$(USER_OBJ))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,build/tests/%,$(UNIT_SRC))

.PHONY: all clean test unit integration vmlinux bench
all: tachyon-bpf

build:
	mkdir -p build build/tests

build/tachyon.bpf.o: bpf/tachyon.bpf.c include/tachyon.h vmlinux/vmlinux.h | build
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	llvm-strip -g $@

build/tachyon.skel.h: build/tachyon.bpf.o
	$(BPFTOOL) gen skeleton $< name tachyon_bpf > $@

build/%.o: user/%.c $(wildcard user/*.h) include/tachyon.h build/tachyon.skel.h | build
	$(CC) $(CFLAGS) -c $< -o $@

build/assets.o: user/assets.S $(wildcard user/assets/*) | build
	$(CC) -c $< -o $@

tachyon-bpf: $(USER_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/tests/%: tests/unit/%.c $(LIB_OBJ) | build
	$(CC) $(CFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS) -lcmocka

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

integration: tachyon-bpf
	bash tests/integration/run.sh

test: unit integration

bench: tachyon-bpf
	@bash bench/run.sh

# Regenerate vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

clean:
	rm -rf build tachyon-bpf
