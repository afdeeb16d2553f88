#!/usr/bin/env bash
# Builds perfscope twice (gcc, and clang with ASan+UBSan and the fuzzers) and runs every suite in
# both, and builds it a third time without BPF programs (-Dbpf=disabled); the last line is
# "N passed, N failed, N skipped". Run as root from the repository root. tests/README.md says
# what each part costs and how to run one test.
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
out=${PERFSCOPE_BUILD_ROOT:-$src/build-ci}
werror=${PERFSCOPE_WERROR:-true}
mkdir -p "$out"

# tracefs is needed by tracepoint tests; perfscope mounts it itself, but do it once up front.
if ! grep -q ' tracefs ' /proc/mounts; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

status=0
build() { # name, then meson options
	local name=$1; shift
	local dir=$out/$name
	echo "=== build $name: $*"
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$src" -Dwerror="$werror" "$@" >"$out/$name-setup.log" 2>&1 ||
			{ cat "$out/$name-setup.log"; return 1; }
	fi
	ninja -C "$dir" >"$out/$name-build.log" 2>&1 || { tail -n 60 "$out/$name-build.log"; return 1; }
}
# build_bg NAME OPTS...: build() in the background, its messages kept for build_wait
build_bg() {
	local name=$1
	build "$@" >"$out/$name-bg.txt" 2>&1 &
	bg_pid[$name]=$!
}
# build_wait NAME: waits for build_bg NAME, prints its messages; its status
build_wait() {
	local rc
	wait "${bg_pid[$1]}"
	rc=$?
	cat "$out/$1-bg.txt"
	return $rc
}
runtests() {
	local dir=$out/$1 t0=$SECONDS
	echo "=== test $1"
	# Three at a time: the suites that may share the machine (unit, fuzz, conformance shards) run
	# side by side, the rest alone (is_parallel: false). Sanitizers are slow: the timeout multiplier.
	meson test -C "$dir" --print-errorlogs --num-processes 3 ${2:-} >"$out/$1-test.log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$out/$1-test.log" | sed 's/^/  /'
	echo "=== test $1: $((SECONDS - t0)) s"
}

# The builds overlap the tests: ASan+UBSan builds while the gcc build is tested, the build without
# BPF programs while the ASan build is tested (2 cores: the tests then run on a loaded machine,
# which they must bear anyway).
declare -A bg_pid=()
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
logs=()
gcc_ok=0
build gcc --buildtype=debugoptimized && gcc_ok=1 || status=1
CC=clang build_bg asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true
if [ $gcc_ok -eq 1 ]; then
	# the gcc build's tests do not run under the sanitizers' options. Two suites run in one
	# build only, each where it costs least for what it shows (run in both, they cost ~250 s of
	# the 15 minutes): the conformance shards (every profiler's lifecycle contract: behaviour,
	# mostly waiting) here, the option sweep (every option, for the sanitizers' reports) in asan.
	ASAN_OPTIONS= UBSAN_OPTIONS= runtests gcc "--no-suite sweep"
	logs+=("$out/gcc/meson-logs/testlog.json")
fi
asan_ok=0
build_wait asan && asan_ok=1 || status=1
# Without BPF programs (-Dbpf=disabled: no clang -target bpf, no bpftool): built, warning-free,
# but not tested again; the gcc build's tests cover the same code.
build_bg nobpf --buildtype=debugoptimized -Dbpf=disabled
if [ $asan_ok -eq 1 ]; then
	runtests asan "--timeout-multiplier 3 --no-suite conformance"
	logs+=("$out/asan/meson-logs/testlog.json")
fi
build_wait nobpf || status=1
echo "=== total: $SECONDS s"
if [ ${#logs[@]} -eq 0 ]; then
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
python3 "$src/tests/summarize.py" "${logs[@]}"
rc=$?
[ $status -ne 0 ] && { echo "a build failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
exit $rc
