#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make check: every suite on each host backend, then the build checks.
# One TAP stream, numbered here; exits non-zero if any case failed.
# Usage: run-tests.sh BUILD_DIR   (CHECK_SUITES: which suites, default all)
set -euo pipefail

build=$1
here=$(cd "$(dirname "$0")/.." && pwd)
n=0
failed=0

emit() { # emit ok|not-ok NAME
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

# Run one suite binary and renumber its TAP lines under a prefix.
suite() { # suite PREFIX BINARY
	local prefix=$1 bin=$2 line status=0 seen=0 out
	out=$(mktemp)
	"$bin" >"$out" 2>&1 || status=$?
	while IFS= read -r line; do
		case "$line" in
		"ok "*) seen=1; emit ok "$prefix ${line#ok [0-9]* }" ;;
		"not ok "*) seen=1; emit not-ok "$prefix ${line#not ok [0-9]* }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$out"
	# A crash or a failure outside any case is a failure of its own.
	if [ "$status" != 0 ] && ! grep -q '^not ok ' "$out"; then
		emit not-ok "$prefix $(basename "$bin") exited with status $status"
		tail -n 5 "$out" | sed 's/^/#   /'
	elif [ "$seen" = 0 ]; then
		emit not-ok "$prefix $(basename "$bin") printed no test case"
	fi
	rm -f "$out"
}

# Under TSan: every report to a file in TSAN_REPORTS, fork children's too;
# no sleep at exit (1 s by default, in every child that has threads).
if [ -n "${TSAN_REPORTS:-}" ]; then
	rm -rf "$TSAN_REPORTS"
	mkdir -p "$TSAN_REPORTS"
	export TSAN_OPTIONS="log_path=$TSAN_REPORTS/report atexit_sleep_ms=0 ${TSAN_OPTIONS:-}"
fi

backends="memfd_secret mlock"
for b in $backends; do
	for t in ${CHECK_SUITES:-api differential threads fork seed_api}; do
		SECARENA_BACKEND=$b suite "[$b]" "$build/tests/test_$t"
	done
done

if [ -n "${TSAN_REPORTS:-}" ]; then
	if [ -z "$(ls -A "$TSAN_REPORTS")" ]; then
		emit ok "no ThreadSanitizer report (fork children included)"
	else
		emit not-ok "no ThreadSanitizer report (fork children included)"
		grep -h -E '^(WARNING|SUMMARY): ThreadSanitizer' "$TSAN_REPORTS"/* | sed 's/^/#   /'
		echo "#   reports: $TSAN_REPORTS"
	fi
	unset TSAN_OPTIONS
fi

# Only the API is exported from the shared library.
extra=$(nm -D --defined-only "$build/libsecarena.so.0" | awk '{print $3}' |
	grep -v -E '^(secarena_|secure_|start_secure_allocation|stop_secure_allocation|flush_secure_arena|LIBSECARENA_0)' || true)
if [ -z "$extra" ]; then emit ok "libsecarena.so.0 exports only the API"
else emit not-ok "libsecarena.so.0 exports only the API"; echo "#   extra: $extra"; fi
if readelf -d "$build/libsecarena.so.0" | grep -q 'SONAME.*libsecarena.so.0'; then
	emit ok "soname is libsecarena.so.0"
else
	emit not-ok "soname is libsecarena.so.0"
fi
# The public headers stand alone in C99 pedantic and in C++.
hdr_ok=ok
for h in secarena.h secure_malloc.h secarena_status.h; do
	echo "#include <$h>" | gcc -std=c99 -pedantic -Werror -Wall -Wextra -I"$here/include" \
		-x c -fsyntax-only - || hdr_ok=not-ok
	echo "#include <$h>" | g++ -Werror -Wall -Wextra -I"$here/include" \
		-x c++ -fsyntax-only - || hdr_ok=not-ok
done
emit "$hdr_ok" "public headers build alone in C99 pedantic and C++"
# A program links through pkg-config's flags against the shared library.
prog=$(mktemp -d)
printf '#include <secarena.h>\nint main(void){return secarena_initialized();}\n' >"$prog/t.c"
# shellcheck disable=SC2086 # SAN is a list of flags
if gcc ${SAN:-} -I"$here/include" "$prog/t.c" -L"$build" -lsecarena -o "$prog/t" &&
	LD_LIBRARY_PATH="$build" "$prog/t" && grep -q '^Libs: -L${libdir} -lsecarena' "$build/libsecarena.pc"; then
	emit ok "links against libsecarena.so with the .pc flags"
else
	emit not-ok "links against libsecarena.so with the .pc flags"
fi
rm -rf "$prog"
# The C example in README.md is tests/readme_example.c without its licence
# line, builds against the static library with -Werror and runs.
readme_case="README example is tests/readme_example.c, builds with -Werror and runs"
prog=$(mktemp -d)
awk '/^## Using libsecarena from C$/ { s = 1; next }
	s && /^## / { exit }
	s && !c && /^```c$/ { c = 1; next }
	c && /^```$/ { exit }
	c { print }' "$here/../README.md" >"$prog/readme.c"
awk 'top && /^(\/\/|\/\*).*SPDX-License-Identifier:/ { next } { top = 0; print }' top=1 \
	"$here/tests/readme_example.c" >"$prog/example.c"
readme_why=
# shellcheck disable=SC2086 # SAN is a list of flags
if [ ! -s "$prog/readme.c" ]; then
	readme_why="no C block under '## Using libsecarena from C' in README.md"
elif ! diff -u "$prog/readme.c" "$prog/example.c" >"$prog/log"; then
	readme_why="README.md and tests/readme_example.c differ"
elif ! gcc ${SAN:-} -Werror -Wall -Wextra -I"$here/include" "$here/tests/readme_example.c" \
	"$build/libsecarena.a" -pthread -o "$prog/example" >"$prog/log" 2>&1; then
	readme_why="readme_example.c does not build"
else
	status=0
	SECARENA_BACKEND=memfd_secret "$prog/example" >"$prog/log" 2>&1 || status=$?
	[ "$status" = 0 ] || readme_why="readme_example exited with status $status on memfd_secret"
fi
if [ -z "$readme_why" ]; then
	emit ok "$readme_case"
else
	emit not-ok "$readme_case"
	echo "#   $readme_why"
	sed 's/^/#   /' "$prog/log"
fi
rm -rf "$prog"
if man --warnings -l -Tutf8 "$here/man/secarena_malloc.3" >/dev/null 2>"$build/man.log" &&
	! grep -q . "$build/man.log"; then
	emit ok "man page renders without warnings"
elif ! command -v man >/dev/null; then
	echo "ok $((n += 1)) man page renders without warnings # SKIP no man(1)"
else
	emit not-ok "man page renders without warnings"
	sed 's/^/#   /' "$build/man.log"
fi
echo "1..$n"
[ "$failed" = 0 ]
