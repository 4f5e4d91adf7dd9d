#!/usr/bin/env bash
# demo.sh: set up, build, and profile the bundled demo workload (demo/app.py)
# for 10 seconds; writes out/demo.html (flame graph) and out/demo.folded.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "demo: run as root (sudo): the BPF program needs CAP_BPF and CAP_PERFMON" >&2; exit 1; }
bash scripts/install-deps.sh build
make -s
mkdir -p out
py=/usr/bin/python3.11
[ -x "$py" ] || py=$(command -v python3)
./tachyon-bpf -r 199 -o out/demo.html -o out/demo.folded -o out/demo.json -- "$py" demo/app.py 10
echo "demo: open out/demo.html in a browser"
