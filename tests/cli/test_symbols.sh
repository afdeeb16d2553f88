#!/usr/bin/env bash
# libperfscope's global symbols stay in the psc_ namespace: the shared library exports only the
# PSC_API functions of the installed headers, and the static archive (whose hidden symbols are
# still global to the program it is linked into) defines nothing else either.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
: "${BUILD_ROOT:?}" "${SOURCE_ROOT:?}"

so=$BUILD_ROOT/lib/libperfscope.so
ar=$BUILD_ROOT/lib/libperfscope.a
plan 4

# What a compiler or sanitizer adds by itself: not the library's names. Version nodes (the
# LIBPERFSCOPE_0 of the version script) are absolute symbols, type A.
generated='^(__asan|___asan|__odr_asan|__ubsan|__sanitizer|__sancov|__llvm|__profc_|__profd_|__profn_|__start_|__stop_|_init$|_fini$)'

outside() { # nm's "ADDR TYPE NAME" lines -> names of defined globals outside psc_
	awk 'NF == 3 && $2 != "A" {print $3}' | sed 's/@.*//' | grep -Ev "$generated" | grep -v '^psc_' | sort -u
}

if [ ! -f "$so" ] || [ ! -f "$ar" ]; then
	fail "libperfscope.so or libperfscope.a missing under $BUILD_ROOT/lib"
	skip_all "no library"
fi

# 1: the shared library's dynamic symbol table
bad=$(nm -D --defined-only "$so" | outside)
if [ -z "$bad" ]; then
	ok "libperfscope.so exports only psc_ symbols ($(nm -D --defined-only "$so" | grep -c ' psc_'))"
else
	fail "libperfscope.so exports symbols outside psc_: $(echo "$bad" | head -10 | tr '\n' ' ')"
fi

# 2: and each is a PSC_API declaration of an installed header, not an internal psc_ helper
undeclared=
for sym in $(nm -D --defined-only "$so" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | grep '^psc_'); do
	grep -Eq "PSC_API[^;]*[^a-zA-Z0-9_]$sym\(" "$SOURCE_ROOT"/include/perfscope/*.h ||
		undeclared="$undeclared $sym"
done
if [ -z "$undeclared" ]; then
	ok "every export of libperfscope.so is a PSC_API function of include/perfscope/"
else
	fail "exported but not declared PSC_API in include/perfscope/:$undeclared"
fi

# 3: the static archive: hidden visibility does not apply there, every global is the program's
bad=$(nm -g --defined-only "$ar" 2>/dev/null | outside)
if [ -z "$bad" ]; then
	ok "libperfscope.a defines only psc_ globals ($(nm -g --defined-only "$ar" | grep -c ' psc_'))"
else
	fail "libperfscope.a defines globals outside psc_: $(echo "$bad" | head -10 | tr '\n' ' ')"
fi

# 4: the check itself sees a stray global (an object with one, like sys_perf_event_open was)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'int stray_helper(void);\nint stray_helper(void) { return 1; }\nint psc_fine(void) { return 2; }\n' >"$tmp/t.c"
if ${CC:-cc} -c -o "$tmp/t.o" "$tmp/t.c" && [ "$(nm -g --defined-only "$tmp/t.o" | outside)" = stray_helper ]; then
	ok "the filter reports a non-psc_ global (stray_helper) and passes psc_ ones"
else
	fail "the filter missed stray_helper in a test object"
fi
done_testing
