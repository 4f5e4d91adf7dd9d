# steps.sh: sourced by the shell test drivers: TAP-like ok/FAIL lines, a
# step runner that stops at the first failure, and the closing count line.
# Set STEPS_NAME before use.
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   - [$STEPS_NAME] $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - [$STEPS_NAME] $*"; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]; exit $?; }
step() { # description command...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what (exit $?)"; finish; fi
}
