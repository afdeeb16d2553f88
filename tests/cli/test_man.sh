#!/usr/bin/env bash
# The man pages as installed by `meson install`: each is in the right section directory and renders
# with groff (-ww: every warning) and man(1) without a single warning. Then the README's install
# step, `meson install -C build && ldconfig`, for real into /usr/local, but in a private mount
# namespace over an empty /usr/local and a private ld.so.cache, so the machine is not touched:
# perfscope, man perfscope and pkg-config perfscope work, and a program built with it runs.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
: "${BUILD_ROOT:?}"
P=${PERFSCOPE:?}
# every page the source has, each where its section puts it (a new page is checked without a list to edit)
PAGES=()
for f in "${SOURCE_ROOT:?}"/docs/man/*.[1-8]; do
	b=${f##*/}
	PAGES+=("man${b##*.}/$b")
done

plan $((9 + 2 * ${#PAGES[@]}))

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
if meson install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$dest" >"$dest/install.log" 2>&1; then
	ok "meson install --destdir"
else
	fail "meson install --destdir failed"
	sed 's/^/#   /' "$dest/install.log" | tail -5
fi
mandir=$(find "$dest" -type d -name man1 -path '*/share/man/*' | head -1)
mandir=${mandir%/man1}

for page in "${PAGES[@]}"; do
	f=$mandir/$page
	if [ ! -f "$f" ]; then
		fail "$page not installed under share/man"
		skip "$page not installed"
		continue
	fi
	# groff: -ww enables every warning, -z discards the output so only diagnostics remain
	groff -man -Tutf8 -ww -z "$f" >"$dest/groff.err" 2>&1
	if [ ! -s "$dest/groff.err" ]; then ok "$page renders with groff -ww, no warnings"; else
		fail "$page: groff warnings"; sed 's/^/#   /' "$dest/groff.err" | head -5; fi
	# man -l as a reader sees it (man may be absent in minimal images: groff alone then)
	if command -v man >/dev/null; then
		MANWIDTH=80 MAN_KEEP_STDERR=1 man -l "$f" >"$dest/man.out" 2>"$dest/man.err"
		if [ -s "$dest/man.out" ] && [ ! -s "$dest/man.err" ] && grep -q '^NAME' "$dest/man.out"; then
			ok "$page: man -l shows it (NAME ... SEE ALSO), nothing on stderr"
		else
			fail "$page: man -l failed"; sed 's/^/#   /' "$dest/man.err" | head -5
		fi
	else
		skip "man(1) is not installed"
	fi
done

# perfscope.1 against the profiler table: a profiler added to the table and not to the manual
# (its own page, its entry under PROFILERS, its name in SEE ALSO) fails here
man_vs_table() { # prints what perfscope.1 lacks, by kind
	"$P" help --table --format json | python3 -c '
import json, os, re, sys
src, page = sys.argv[1], open(sys.argv[1] + "/perfscope.1").read()
profs = [json.loads(l)["name"] for l in sys.stdin if l.strip()]
sec = lambda name: page.split(".SH " + name + "\n", 1)[1].split("\n.SH ", 1)[0]
roff = lambda n: n.replace("-", "\\-")
for kind, bad in (
        ("page", [n for n in profs if not any(os.path.exists(f"{src}/perfscope-{n}.{s}") for s in "18")]),
        ("PROFILERS", [n for n in profs if not re.search(r"^\.B " + re.escape(roff(n)) + "$", sec("PROFILERS"), re.M)]),
        ("SEE ALSO", [n for n in profs if not re.search(r"^\.BR perfscope\\-" + re.escape(roff(n)) + r" \([18]\)", sec("SEE ALSO"), re.M)])):
    print(kind + ":", " ".join(bad) if bad else "-", f"of {len(profs)}")' "${SOURCE_ROOT:?}/docs/man"
}
man_vs_table >"$dest/table.out" 2>&1
sed 's/^/#   /' "$dest/table.out"
check "every profiler of the table has its man page" grep -q '^page: - of' "$dest/table.out"
check "perfscope.1 lists every profiler of the table under PROFILERS" grep -q '^PROFILERS: - of' "$dest/table.out"
check "perfscope.1's SEE ALSO names every profiler's page" grep -q '^SEE ALSO: - of' "$dest/table.out"

# Every long option stat's help mentions is documented in perfscope-stat.1
missing=
for opt in $("$P" help stat | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
	# roff escapes '-' as '\-'
	grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$mandir/man1/perfscope-stat.1" 2>/dev/null ||
		missing="$missing $opt"
done
if [ -z "$missing" ]; then ok "perfscope-stat.1 documents every long option of 'perfscope help stat'"; else
	fail "perfscope-stat.1 lacks:$missing"; fi
# README: `meson install -C build && ldconfig`, then perfscope, man and pkg-config work (a
# sanitized build's library needs its program built with the same sanitizers)
san=
if [ -n "${B_SANITIZE:-}" ] && [ "$B_SANITIZE" != none ]; then san=-fsanitize=$B_SANITIZE; fi
if need_root && unshare --mount --propagation private true 2>/dev/null && command -v pkg-config >/dev/null; then
	printf '%s\n' '#include <perfscope/perfscope.h>' '#include <stdio.h>' \
		'int main(void) { printf("libperfscope %s\n", psc_version()); return 0; }' >"$dest/t.c"
	unshare --mount --propagation private bash -c '
set -e
mount -t tmpfs tmpfs /usr/local
meson install -C "$1" --no-rebuild --quiet >"$2/real-install.log" 2>&1 || { echo "install failed"; exit 1; }
ldconfig -X -C "$2/ld.so.cache" # -X: no links changed anywhere
mount --bind "$2/ld.so.cache" /etc/ld.so.cache
echo "binary: $(command -v perfscope) $(perfscope --version)"
echo "man: $(man -w perfscope) $(man -w perfscope-trace) $(man -w 3 libperfscope)"
MANWIDTH=80 man perfscope 2>/dev/null | grep -q "^NAME" && echo "man renders"
echo "pkg-config: $(pkg-config --modversion perfscope)"
$3 "$2/t.c" $(pkg-config --cflags --libs perfscope) -o "$2/t" && "$2/t"
' _ "$BUILD_ROOT" "$dest" "${CC:-cc} $san" >"$dest/readme.out" 2>&1
	sed 's/^/#   /' "$dest/readme.out"
	check "README install step: perfscope is on PATH under /usr/local/bin" grep -q '^binary: /usr/local/bin/perfscope perfscope ' "$dest/readme.out"
	check "README install step: man perfscope, perfscope-trace and libperfscope(3) are found and render" \
		sh -c "grep -q '^man: /usr/local/share/man/man1/perfscope.1 /usr/local/share/man/man1/perfscope-trace.1 /usr/local/share/man/man3/libperfscope.3' '$dest/readme.out' && grep -q '^man renders' '$dest/readme.out'"
	check "README install step: pkg-config perfscope gives the version" grep -Eq '^pkg-config: [0-9]+\.[0-9]+\.[0-9]+$' "$dest/readme.out"
	check "README install step: a program built with pkg-config perfscope runs (ldconfig)" grep -Eq '^libperfscope [0-9]+\.' "$dest/readme.out"
else
	for i in 1 2 3 4; do skip "needs root, unshare(1) and pkg-config to install into a private /usr/local"; done
fi
done_testing
