#!/bin/bash
# check-core.sh: the arm64 BPF objects (make ARCH=arm64: build-arm64/tachyon.bpf.o, the sampler,
# and taskregs.bpf.o, dump --native's task iterator) CO-RE-relocated by libbpf against each
# arm64 kernel's BTF, without arm64 hardware: every relocation must find
# its target (task_struct.thread.uw.tp_value, pt_regs, ...) in Debian's cloud-arm64 6.1, 6.12
# and 7.x. The BTF is cut out of each raw Image (scripts/btf_from_image.py); the kernels are
# tests/kernels/fetch-kernels.sh fetches and caches (arm64-*/vmlinuz), or the images given. The
# x86_64 object against the first one is the check's control: it must leave some unresolved
# (thread.fsbase is x86's). Root: libbpf creates the maps before it relocates.
#
# Usage: tests/arm64/check-core.sh [IMAGE...]    ends with "N passed, N failed"
set -uo pipefail
cd "$(dirname "$0")/../.."
prog=${0##*/}
KDIR=${TB_KERNELS_DIR:-/var/cache/tachyon-bpf/kernels}
[[ $(id -u) == 0 ]] || { echo "$prog: run as root (libbpf creates the maps)" >&2; exit 1; }

images=("$@")
if [[ ${#images[@]} -eq 0 ]]; then
	# all three, also where the kernel matrix booted a subset (fetched once, then cached)
	TB_KERNELS_ARCH=arm64 bash tests/kernels/fetch-kernels.sh >/dev/null ||
		echo "$prog: not every arm64 kernel could be fetched; checking those cached" >&2
	mapfile -t images < <(compgen -G "$KDIR/arm64-*/vmlinuz" || true)
fi
[[ ${#images[@]} -gt 0 ]] || { echo "$prog: no arm64 kernel image (run the arm64 kernel fetch, or give IMAGE)" >&2; exit 1; }

OBJS=(tachyon taskregs)
targets=()
for obj in "${OBJS[@]}"; do targets+=("build-arm64/$obj.bpf.o"); done
make -s -j2 build/tachyon.bpf.o >/dev/null && make -s -j2 ARCH=arm64 "${targets[@]}" >/dev/null ||
	{ echo "$prog: the BPF objects did not build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -Wextra -o "$tmp/core_relocs" tests/arm64/core_relocs.c -lbpf || { echo "$prog: core_relocs did not build" >&2; exit 1; }

passed=0
failed=0
for img in "${images[@]}"; do
	name=$(basename "$(dirname "$img")")
	if ! python3 scripts/btf_from_image.py "$img" "$tmp/$name.btf" 2>/dev/null; then
		failed=$((failed + 1)); echo "FAIL $name: no BTF in $img"; continue
	fi
	for obj in "${OBJS[@]}"; do
		read -r _ ok _ bad < <("$tmp/core_relocs" "build-arm64/$obj.bpf.o" "$tmp/$name.btf")
		if [[ ${ok:-0} -gt 0 && ${bad:-1} -eq 0 ]]; then
			passed=$((passed + 1)); echo "ok   $name $obj: $ok CO-RE relocations resolved, none unresolved"
		else
			failed=$((failed + 1)); echo "FAIL $name $obj: ${ok:-?} resolved, ${bad:-?} unresolved"
		fi
	done
done
first=$(basename "$(dirname "${images[0]}")")
read -r _ ok _ bad < <("$tmp/core_relocs" build/tachyon.bpf.o "$tmp/$first.btf")
if [[ ${bad:-0} -gt 0 ]]; then
	passed=$((passed + 1)); echo "ok   control: the x86_64 object against $first leaves $bad unresolved"
else
	failed=$((failed + 1)); echo "FAIL control: the x86_64 object against $first resolved everything (${ok:-?}): the check sees nothing"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
