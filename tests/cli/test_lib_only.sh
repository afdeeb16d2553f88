#!/usr/bin/env bash
# A library-only build (-Dcli=false): configured, built and installed from this source tree in a
# temporary directory, it needs libtraceevent alone, installs only the library, its headers,
# perfscope.pc and libperfscope(3), and the examples build against it with pkg-config, shared and
# static.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
: "${SOURCE_ROOT:?}"
CC=${CC:-cc}
EXAMPLES=(count_command measure_function per_cpu)

plan $((8 + ${#EXAMPLES[@]}))

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/build dest=$tmp/dest

# 1: configure. The compiler of this build, without its sanitizer: the point is the dependencies.
if CC="$CC" meson setup "$b" "$SOURCE_ROOT" -Dcli=false -Dwerror=true --prefix=/usr \
	--buildtype=debugoptimized >"$tmp/setup.log" 2>&1; then
	ok "meson setup -Dcli=false"
else
	fail "meson setup -Dcli=false failed"
	sed 's/^/#   /' "$tmp/setup.log" | tail -10
	skip_all "not configured"
fi

# 2: it looks up libtraceevent (and threads) and nothing of the tools: libdw, libmicrohttpd ...
deps=$(meson introspect --dependencies "$b" |
	python3 -c 'import json, sys; print(" ".join(sorted(d["name"] for d in json.load(sys.stdin))))')
if [ "$deps" = "libtraceevent threads" ]; then
	ok "a library-only build needs only libtraceevent and threads"
else
	fail "a library-only build looks up: $deps"
fi

# 3: build and install
if ninja -C "$b" >"$tmp/build.log" 2>&1 &&
	meson install -C "$b" --no-rebuild --quiet --destdir "$dest" >"$tmp/install.log" 2>&1; then
	ok "built and installed"
else
	fail "build or install failed"
	cat "$tmp/build.log" "$tmp/install.log" | sed 's/^/#   /' | tail -10
	skip_all "not built"
fi

# 4: what is installed: the library, headers, pkg-config file, man page 3, and nothing else
installed=$(cd "$dest" && find . -type f -o -type l | sed 's|^\./||' | sort)
unexpected=$(echo "$installed" | grep -Ev '^usr/(include/perfscope/[a-z]+\.h|lib/[^/]*/?libperfscope\.(a|so|so\.0|so\.0\.[0-9.]+)|lib/[^/]*/?pkgconfig/perfscope\.pc|share/man/man3/libperfscope\.3)$')
if [ -z "$unexpected" ] && echo "$installed" | grep -q 'man3/libperfscope.3$' &&
	echo "$installed" | grep -q 'include/perfscope/perfscope.h$'; then
	ok "installs the library, headers, perfscope.pc and libperfscope.3 only"
else
	fail "installed: $(echo "$unexpected" | head -5 | tr '\n' ' ')"
fi

pcfile=$(find "$dest" -name perfscope.pc | head -1)
libso=$(find "$dest" -name 'libperfscope.so.0.*' | head -1)
libdir=$(dirname "${libso:-/nonexistent/x}")
export PKG_CONFIG_PATH=$(dirname "${pcfile:-/nonexistent/x}") PKG_CONFIG_SYSROOT_DIR=$dest

# 5: perfscope.pc and the shared library name libtraceevent and nothing of the tools
needed=$(readelf -d "$libso" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
reqs=$(sed -n 's/^Requires.private: *//p' "$pcfile" 2>/dev/null)
libs_private=$(sed -n 's/^Libs.private: *//p' "$pcfile" 2>/dev/null)
if [ "$reqs" = libtraceevent ] && ! echo "$libs_private" | grep -Eq -- '-l(dw|elf|bpf|z|lzma|iberty|tracefs)\b|\.a\b' &&
	[ "$needed" = "libc.so.6 libtraceevent.so.1 " ]; then
	ok "Requires.private: $reqs; Libs.private: $libs_private; NEEDED: $needed"
else
	fail "Requires.private '$reqs', Libs.private '$libs_private', NEEDED '$needed'"
fi

read -r -a flags <<<"$(pkg-config --cflags --libs perfscope 2>/dev/null)"
# 6..: each example against the installed shared library
for ex in "${EXAMPLES[@]}"; do
	if $CC -std=gnu11 -Wall -Wextra -Werror -o "$tmp/$ex" "$SOURCE_ROOT/examples/$ex.c" \
		"${flags[@]}" 2>"$tmp/$ex.err" &&
		LD_LIBRARY_PATH=$libdir ldd "$tmp/$ex" | grep -q "libperfscope.so.0 => $libdir"; then
		ok "examples/$ex.c builds against the library-only install"
	else
		fail "examples/$ex.c does not build"
		sed 's/^/#   /' "$tmp/$ex.err" | head -10
	fi
done

# next: statically against libperfscope.a, with what pkg-config --static adds for it
read -r -a cflags <<<"$(pkg-config --cflags perfscope 2>/dev/null)"
read -r -a slibs <<<"$(pkg-config --static --libs perfscope 2>/dev/null | sed 's/-lperfscope//')"
if $CC -std=gnu11 -Wall -Werror -o "$tmp/count_static" "$SOURCE_ROOT/examples/count_command.c" \
	"${cflags[@]}" "$libdir/libperfscope.a" "${slibs[@]}" 2>"$tmp/static.err" &&
	! ldd "$tmp/count_static" | grep -q libperfscope; then
	ok "examples/count_command.c links libperfscope.a with pkg-config --static (${slibs[*]})"
else
	fail "static link failed"
	sed 's/^/#   /' "$tmp/static.err" | head -10
fi

# last two: the statically linked program runs (software events need no PMU), and the
# library-only build's own examples were built too
run_capture "$tmp/count_static" true
if [ "$RC" -eq 0 ] && grep -q 'task-clock' "$OUT"; then
	ok "the statically linked count_command counts 'true'"
elif [ "$RC" -ne 0 ] && grep -qi 'permission denied' "$ERR"; then
	skip "perf_event_open refused here (not root)"
else
	fail "static count_command: exit $RC: $(head -2 "$ERR")"
fi
check "the library-only build compiled examples/ itself" test -x "$b/examples/example_per_cpu"
done_testing
