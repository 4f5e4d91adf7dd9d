# browser-env.sh: sourced by the browser tests (tests/browser/run.sh): Debian's chromium, node
# and npm, playwright-core (npm ci) in the tests' folder, and the flags chromium runs with
# (tests/browser/harness.mjs reads TB_CHROMIUM_FLAGS, from the environment or from this file).
# Usage: browser_env DIR

# headless as root (no sandbox), no GPU, nothing fetched from the network by the browser itself
TB_CHROMIUM_FLAGS="--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync"

browser_env() {
	local dir=$1
	export TB_CHROMIUM_FLAGS
	if [ ! -x /usr/bin/chromium ]; then
		echo "== installing chromium (Debian package)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq chromium fonts-dejavu-core >/dev/null || return 1
	fi
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "== installing nodejs + npm (Debian packages)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq nodejs npm >/dev/null || return 1
	fi
	if [ ! -f "$dir/node_modules/playwright-core/package.json" ]; then
		echo "== npm ci (playwright-core)"
		(cd "$dir" && { npm ci --no-audit --no-fund --loglevel=error ||
			npm install --no-audit --no-fund --loglevel=error; })
	fi
}
