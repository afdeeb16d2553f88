#!/usr/bin/env bash
# Builds perfscope twice (gcc, and clang with ASan+UBSan and the fuzzers) and runs every suite in
# both, then builds it a third time without BPF programs (-Dbpf=disabled); the last line is
# "N passed, N failed, N skipped". Run as root from the repository root.
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
runtests() {
	local dir=$out/$1
	echo "=== test $1"
	# Fuzz targets and sanitizers are slow; the timeout multiplier keeps the limits honest elsewhere.
	meson test -C "$dir" --print-errorlogs --num-processes 2 ${2:-} >"$out/$1-test.log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$out/$1-test.log" | sed 's/^/  /'
}

logs=()
if build gcc --buildtype=debugoptimized; then
	runtests gcc
	logs+=("$out/gcc/meson-logs/testlog.json")
else
	status=1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if CC=clang build asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true; then
	runtests asan "--timeout-multiplier 3"
	logs+=("$out/asan/meson-logs/testlog.json")
else
	status=1
fi
# Without BPF programs (-Dbpf=disabled: no clang -target bpf, no bpftool): built, warning-free,
# but not tested again (about a minute on 2 cores); the gcc build's tests cover the same code.
build nobpf --buildtype=debugoptimized -Dbpf=disabled || status=1
if [ ${#logs[@]} -eq 0 ]; then
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
python3 "$src/tests/summarize.py" "${logs[@]}"
rc=$?
[ $status -ne 0 ] && { echo "a build failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
exit $rc
