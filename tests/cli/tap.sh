# TAP helpers for CLI tests: source it, call plan N, then ok/fail/skip/check; finish with done_testing.
# shellcheck shell=bash
_tap_n=0
_tap_failed=0
_tap_plan=0
plan() { _tap_plan=$1; echo "1..$1"; }
ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() { _tap_n=$((_tap_n + 1)); _tap_failed=1; echo "not ok $_tap_n - $*"; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
diag() { echo "# $*"; }
# todo_check REASON DESC CMD...: as check, but a failure is reported "not ok # TODO REASON" (known,
# not hidden, not failing the suite): for a check seen to fail erratically whose cause is open
todo_check() {
	local why=$1 d=$2
	shift 2
	if "$@"; then ok "$d"; else _tap_n=$((_tap_n + 1)); echo "not ok $_tap_n - $d # TODO $why"; fi
}
# check DESC CMD...: ok when CMD succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
# run_capture: runs "$@" with stdout/stderr to $OUT/$ERR, status in $RC (never aborts the script)
run_capture() {
	OUT=$(mktemp) ERR=$(mktemp)
	_tap_tmpfiles+=("$OUT" "$ERR")
	"$@" >"$OUT" 2>"$ERR"
	RC=$?
}
# expect_rc DESC RC_WANTED CMD...: checks the exit status and that stderr says something
expect_rc() {
	local d=$1 want=$2; shift 2
	run_capture "$@"
	if [ "$RC" -eq "$want" ]; then ok "$d (exit $RC)"; else
		fail "$d: exit $RC, wanted $want"; sed 's/^/#   stderr: /' "$ERR" | head -5; fi
}
_tap_tmpfiles=()
done_testing() {
	rm -f "${_tap_tmpfiles[@]}" 2>/dev/null
	exit $_tap_failed
}
# skip_all REASON: skips every test of the plan not yet run and ends the script
skip_all() {
	while [ "$_tap_n" -lt "$_tap_plan" ]; do skip "$1"; done
	done_testing
}
need_root() { [ "$(id -u)" -eq 0 ]; }
