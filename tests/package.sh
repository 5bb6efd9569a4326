#!/bin/bash
# The Debian package and the tarball it is built from: `make distcheck`
# (the tarball builds, installs and uninstalls out of tree; a few tests
# run inside it), then `dpkg-buildpackage -b` from that tarball, lintian
# clean of errors, and the package installed and removed in a throwaway
# root: a mount namespace whose /usr, /var and /etc are overlays, so the
# host and the tests running beside this one never see it. There, tbench
# and `man tbench` must be ours while it is installed, dbench's again after
# (debian/tbench.preinst and postrm divert dbench's files). Root; skipped,
# saying why, without dpkg-buildpackage or overlayfs.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root: the throwaway root needs mount namespaces"
command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage not installed (dpkg-dev, debhelper)"
command -v unshare >/dev/null || skip "unshare not installed (util-linux)"
mkdir -p "$TL_TMP/probe/up" "$TL_TMP/probe/wk"
unshare -m --propagation private mount -t overlay overlay \
	-o "lowerdir=/usr,upperdir=$TL_TMP/probe/up,workdir=$TL_TMP/probe/wk" /usr 2>"$TL_TMP/ovl.err" ||
	skip "overlayfs over /usr refused: $(head -n 1 "$TL_TMP/ovl.err")"

BUILD="$(cd "${top_builddir:-.}" && pwd)"
version="$(sed -n 's/^PACKAGE_VERSION = //p' "$BUILD/Makefile")"

# A few tests inside distcheck: the fast and full tiers run the rest. Not
# the make that runs this test's variables (its TESTS would run this test
# again inside distcheck, and so on).
expect_exit 0 "make distcheck" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -C "$BUILD" distcheck TESTS="tests/smoke.sh tests/py-units.sh"
tarball="$BUILD/tbench-$version.tar.gz"
check "distcheck left the tarball" test -f "$tarball"

mkdir "$TL_TMP/deb"
tar -xzf "$tarball" -C "$TL_TMP/deb"
expect_exit 0 "dpkg-buildpackage -b from the tarball" \
	env -C "$TL_TMP/deb/tbench-$version" DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b
debs=("$TL_TMP/deb/tbench_${version}_"*.deb)
deb="${debs[0]}"
[ -f "$deb" ] && ok "a .deb was built" || { not_ok "no .deb in $TL_TMP/deb"; tl_done; }
if command -v lintian >/dev/null; then
	lintian --allow-root "$deb" >"$TL_TMP/lintian" 2>&1 || true
	grep -q '^E:' "$TL_TMP/lintian" && not_ok "lintian errors: $(grep '^E:' "$TL_TMP/lintian" | head -3)" ||
		ok "lintian: no errors"
else
	echo "# lintian not installed: not checked"
fi

# Inside the throwaway root: the checks print ok/not ok lines of their own.
root="$TL_TMP/root"
for d in usr var etc; do mkdir -p "$root/$d-up" "$root/$d-wk"; done
unshare -m --propagation private bash -s "$root" "$deb" >"$TL_TMP/inside" 2>&1 <<'INSIDE' || true
set -u
root="$1" deb="$2"
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
for d in usr var etc; do
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$root/$d-up,workdir=$root/$d-wk" "/$d" ||
		{ not_ok "overlay over /$d"; exit 1; }
done
dbench_before="$(sha256sum /usr/bin/tbench 2>/dev/null || echo none)"
dpkg -i "$deb" >/dev/null && ok "dpkg -i" || not_ok "dpkg -i"
[ "$(command -v tbench)" = /usr/bin/tbench ] && tbench --version | grep -q 'tbench suite' &&
	ok "tbench on PATH is ours" || not_ok "tbench on PATH: $(command -v tbench): $(tbench --version 2>&1 | head -n 1)"
tbench_srv --version 2>&1 | grep -q 'tbench suite' && ok "tbench_srv is ours" || not_ok "tbench_srv is not ours"
zcat "$(man -w tbench)" | grep -q 'replay an SMB file-server trace through a chosen transport' &&
	ok "man tbench is ours" || not_ok "man tbench: $(man -w tbench)"
out="$(tbench -b pipe -t 2 2 2>/dev/null)" && grep -q '^Throughput [0-9.]* MB/sec  2 clients' <<<"$out" &&
	ok "tbench -b pipe -t 2 2 from PATH" || not_ok "tbench -b pipe -t 2 2: $(tail -n 1 <<<"$out")"
if [ "$dbench_before" != none ]; then
	/usr/bin/tbench.dbench --help 2>&1 | grep -q 'dbench version' && ok "dbench's tbench kept as tbench.dbench" ||
		not_ok "no dbench tbench at /usr/bin/tbench.dbench"
fi
dpkg -r tbench >/dev/null && ok "dpkg -r" || not_ok "dpkg -r"
[ "$(sha256sum /usr/bin/tbench 2>/dev/null || echo none)" = "$dbench_before" ] &&
	ok "/usr/bin/tbench is as before (dbench's, or none)" || not_ok "/usr/bin/tbench differs from before"
dpkg-divert --list | grep -q 'by tbench$' && not_ok "diversions left: $(dpkg-divert --list | grep 'by tbench$')" ||
	ok "no diversion left"
[ ! -e /usr/share/tbench ] && ok "no file of the package left" || not_ok "/usr/share/tbench left"
INSIDE
cat "$TL_TMP/inside"
grep -q '^ok - no file of the package left' "$TL_TMP/inside" && ok "the install and removal ran to the end" ||
	not_ok "the install and removal stopped early (above)"
grep -q '^not ok' "$TL_TMP/inside" && TL_FAILED=$((TL_FAILED + 1))
tl_done
