#!/usr/bin/env bash
# The man pages as installed by `meson install`: each is in the right section directory and renders
# with groff (-ww: every warning) and man(1) without a single warning.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
: "${BUILD_ROOT:?}"
P=${PERFSCOPE:?}
PAGES=(man1/perfscope.1 man1/perfscope-stat.1 man1/perfscope-list.1 man1/perfscope-trace.1 man1/perfscope-expr.1 man1/perfscope-top.1 man1/perfscope-num-dist.1 man3/libperfscope.3 man8/perfscope-exporter.8)

plan $((2 + 2 * ${#PAGES[@]}))

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

# Every long option stat's help mentions is documented in perfscope-stat.1
missing=
for opt in $("$P" help stat | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
	# roff escapes '-' as '\-'
	grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$mandir/man1/perfscope-stat.1" 2>/dev/null ||
		missing="$missing $opt"
done
if [ -z "$missing" ]; then ok "perfscope-stat.1 documents every long option of 'perfscope help stat'"; else
	fail "perfscope-stat.1 lacks:$missing"; fi
done_testing
