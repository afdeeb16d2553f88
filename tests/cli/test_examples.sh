#!/usr/bin/env bash
# The installed SDK as a user gets it: meson install into a DESTDIR, then every example in examples/
# compiled with `pkg-config --cflags --libs perfscope` against that tree and run.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
: "${BUILD_ROOT:?}" "${SOURCE_ROOT:?}" "${WORKLOAD:?}"
CC=${CC:-cc}
EXAMPLES=(count_command measure_function per_cpu)

plan $((10 + 2 * ${#EXAMPLES[@]}))

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT

# 1: the install itself (already built by meson test; --no-rebuild keeps ninja out of it)
if meson install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$dest" >"$dest.log" 2>&1; then
	ok "meson install --destdir"
else
	fail "meson install --destdir failed"
	sed 's/^/#   /' "$dest.log" | tail -5
fi
rm -f "$dest.log"

pcfile=$(find "$dest" -name perfscope.pc | head -1)
libso=$(find "$dest" -name 'libperfscope.so.0.*' | head -1)
incdir=$(find "$dest" -type d -path '*/include/perfscope' | head -1)
# 2-4: pkg-config file, library with its soname, headers
check "perfscope.pc installed ($pcfile)" test -n "$pcfile"
if [ -n "$libso" ] && readelf -d "$libso" | grep -q 'SONAME.*\[libperfscope\.so\.0\]'; then
	ok "libperfscope.so.0.* installed with soname libperfscope.so.0"
else
	fail "shared library missing or soname wrong: '$libso'"
fi
check "headers installed under include/perfscope" test -f "$incdir/perfscope.h"

export PKG_CONFIG_PATH=$(dirname "${pcfile:-/nonexistent/x}")
export PKG_CONFIG_SYSROOT_DIR=$dest
libdir=$(dirname "${libso:-/nonexistent/x}")

# 5: every Requires.private package resolves (pkg-config --static needs them all)
if pkg-config --exists --print-errors perfscope 2>"$dest/pc.err" &&
	pkg-config --static --libs perfscope >/dev/null 2>>"$dest/pc.err"; then
	ok "pkg-config resolves perfscope and its Requires.private"
else
	fail "pkg-config cannot resolve perfscope"
	sed 's/^/#   /' "$dest/pc.err"
fi
read -r -a cflags <<<"$(pkg-config --cflags perfscope 2>/dev/null)"
read -r -a flags <<<"$(pkg-config --cflags --libs perfscope 2>/dev/null)"

# The sanitizer build installs an instrumented library: programs linking it need the runtime too.
san=()
if [ -n "${B_SANITIZE:-}" ] && [ "$B_SANITIZE" != none ]; then
	san=(-fsanitize="$B_SANITIZE")
fi

# 6: the public headers are self-contained C11 and C++
hdr_ok=1
for h in "$incdir"/*.h; do
	[ -f "$h" ] || { hdr_ok=0; break; }
	name=perfscope/$(basename "$h")
	printf '#include <%s>\n' "$name" | $CC -std=c11 -Wall -Wextra -Werror -fsyntax-only "${cflags[@]}" -x c - 2>>"$dest/hdr.err" || hdr_ok=0
	printf '#include <%s>\n' "$name" | c++ -Wall -Wextra -Werror -fsyntax-only "${cflags[@]}" -x c++ - 2>>"$dest/hdr.err" || hdr_ok=0
done
if [ $hdr_ok -eq 1 ]; then ok "every installed header compiles alone as C11 and C++"; else
	fail "a header does not compile alone"; sed 's/^/#   /' "$dest/hdr.err" | head -10; fi

# 7: a program linked against the installed library reports its version
cat >"$dest/version.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <perfscope/perfscope.h>
int main(void)
{
	printf("%s\n", psc_version());
	return strcmp(psc_version(), "0.0.0") ? 0 : 1;
}
EOF
if $CC "${san[@]}" -Wall -Werror -o "$dest/version" "$dest/version.c" "${flags[@]}" 2>"$dest/cc.err" &&
	LD_LIBRARY_PATH=$libdir "$dest/version" >"$dest/version.out" &&
	LD_LIBRARY_PATH=$libdir ldd "$dest/version" | grep -q "libperfscope.so.0 => $libdir"; then
	ok "linked against the installed libperfscope.so.0 (version $(cat "$dest/version.out"))"
else
	fail "cannot link or load the installed library"
	sed 's/^/#   /' "$dest/cc.err" | head -5
fi

# 8..: each example compiles warning-free against the installed tree, then runs
for ex in "${EXAMPLES[@]}"; do
	if $CC "${san[@]}" -std=gnu11 -Wall -Wextra -Werror -o "$dest/$ex" "$SOURCE_ROOT/examples/$ex.c" \
		"${flags[@]}" 2>"$dest/$ex.err"; then
		ok "examples/$ex.c builds with pkg-config --cflags --libs perfscope"
	else
		fail "examples/$ex.c does not build"
		sed 's/^/#   /' "$dest/$ex.err" | head -10
	fi
done

run_ex() { run_capture env LD_LIBRARY_PATH="$libdir" "$dest/$1" "${@:2}"; }

# count_command: a workload touching exactly 200 pages, exit status passed through
run_ex count_command "$WORKLOAD" faults 200
pf=$(awk '$2 == "page-faults" {print $1}' "$OUT")
if [ "$RC" -eq 0 ] && [ "${pf:-0}" -ge 200 ] && grep -q 'task-clock' "$OUT"; then
	ok "count_command counts the command ($pf page-faults for 200 pages)"
else
	fail "count_command: exit $RC, page-faults '$pf'"
	sed 's/^/#   /' "$OUT" "$ERR" | head -10
fi

# count_command: a command that cannot run exits 127 with the reason and shows no counts
run_ex count_command /nonexistent/cmd
check "count_command of a missing command: exit 127 (got $RC), the reason, no counts" \
	sh -c "[ $RC -eq 127 ] && grep -q 'cannot run /nonexistent/cmd' '$ERR' && ! grep -q 'counts for' '$OUT'"

# measure_function: psc_measure and the meter count the pages the function touches (at least;
# a sanitizer's shadow memory faults too)
run_ex measure_function
pfs=$(awk '$2 == "page-faults" {printf "%s ", $1}' "$OUT")
read -r -a pf <<<"$pfs"
if [ "$RC" -eq 0 ] && [ "${#pf[@]}" -eq 5 ] && [ "${pf[0]}" -ge 256 ] && [ "${pf[1]}" -ge 64 ] &&
	[ "${pf[4]}" -ge 512 ]; then
	ok "measure_function: psc_measure and 4 meter readings (page-faults: $pfs)"
else
	fail "measure_function: exit $RC"
	sed 's/^/#   /' "$OUT" "$ERR" | head -10
fi

# per_cpu: one line per online CPU with the three counts
run_ex per_cpu 1
n=$(grep -c '^ *CPU[0-9]' "$OUT")
online=$(getconf _NPROCESSORS_ONLN)
if [ "$RC" -eq 0 ] && [ "$n" -eq "$online" ] && grep -q 'cpu-clock=[1-9]' "$OUT"; then
	ok "per_cpu: a line for each of the $online online CPUs"
else
	fail "per_cpu: exit $RC, $n CPU lines for $online CPUs"
	sed 's/^/#   /' "$OUT" "$ERR" | head -10
fi

# bpf_pagefaults: a BPF program of its own, its skeleton generated by this build (-Dbpf), compiled
# against the installed library with libbpf, and run beside a workload faulting pages for ~2 s
skel=$BUILD_ROOT/examples/bpf_pagefaults.skel.h
if [ ! -f "$skel" ]; then
	skip "bpf_pagefaults: this build has no BPF programs (-Dbpf=disabled or no clang/bpftool)"
	skip "bpf_pagefaults: not built"
elif ! $CC "${san[@]}" -std=gnu11 -Wall -Wextra -Werror -I"$(dirname "$skel")" -o "$dest/bpf_pagefaults" \
	"$SOURCE_ROOT/examples/bpf_pagefaults.c" "${flags[@]}" $(pkg-config --cflags --libs libbpf) \
	2>"$dest/bpf_pagefaults.err"; then
	fail "examples/bpf_pagefaults.c does not build"
	sed 's/^/#   /' "$dest/bpf_pagefaults.err" | head -10
	skip "bpf_pagefaults: not built"
else
	ok "examples/bpf_pagefaults.c builds with pkg-config --cflags --libs perfscope libbpf"
	"$WORKLOAD" faults 200000 >/dev/null &
	wl=$!
	run_ex bpf_pagefaults 1
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	total=$(sed -n 's/^page faults on [0-9]* CPUs for 1 s: \([0-9]*\),.*/\1/p' "$OUT")
	wls=$(awk -v pid="$wl" '$1 == pid && $3 == "workload" {print $2}' "$OUT")
	if [ "$RC" -eq 0 ] && [ "${total:-0}" -gt 0 ] && [ "${wls:-0}" -gt 0 ]; then
		ok "bpf_pagefaults: $total page faults, the workload (pid $wl) sampled $wls times in the BPF map"
	elif [ "$RC" -ne 0 ] && grep -q 'BPF refused\|no BPF' "$ERR"; then
		skip "bpf_pagefaults: $(head -1 "$ERR")"
	else
		fail "bpf_pagefaults: exit $RC, total '$total', workload samples '$wls'"
		sed 's/^/#   /' "$OUT" "$ERR" | head -12
	fi
fi
done_testing
