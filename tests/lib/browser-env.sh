# browser-env.sh: sourced by the browser tests: Debian's chromium, node and
# npm, and playwright-core (npm ci) in the test's own folder.
# Usage: browser_env DIR
browser_env() {
	local dir=$1
	if [ ! -x /usr/bin/chromium ]; then
		echo "== installing chromium (Debian package)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
	fi
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "== installing nodejs + npm (Debian packages)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq nodejs npm >/dev/null
	fi
	if [ ! -f "$dir/node_modules/playwright-core/package.json" ]; then
		echo "== npm ci (playwright-core)"
		(cd "$dir" && { npm ci --no-audit --no-fund --loglevel=error ||
			npm install --no-audit --no-fund --loglevel=error; })
	fi
}
