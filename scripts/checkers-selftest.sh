#!/usr/bin/env bash
# scripts/checkers.sh's own test: one cell (smbd, 3.0/sign/none) with small
# bounds passes with the real checkers; and the row goes red, with the
# telling line as its first lines, when a checker fails:
#   - an fsx that reports bad data and exits 1,
#   - an fsx that hangs (CHECK_TIMEOUT=5: "timed out", the cell still ends),
#   - a tar that extracts all but one file and exits 0 (diff -r catches it),
#   - a dbench that prints an ERROR line but exits 0.
# The failing tools are stand-ins put first (a bin directory of links to the
# real build with one tool replaced, or PATH for tar and dbench); the
# mount and server are real.
#
#   scripts/checkers-selftest.sh [BUILD]   (default build; about 3 minutes)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=$(cd "${1:-build}" && pwd)
PY=/usr/bin/python3; [ -x $PY ] || PY=python3
t=$(mktemp -d "${TMPDIR:-/tmp}/checkers-selftest.XXXX")
trap 'rm -rf "$t"' EXIT
export FSX_SECS=10 FSS_SECS=10 DBENCH_SECS=5 TAR_FILES=200
fail=0
cell=3.0/sign/none

# fakebuild NAME SCRIPT: a build dir whose bin/ links the real tools except
# NAME, which runs SCRIPT.
fakebuild() {
  local d=$t/build-$1
  mkdir -p "$d/bin"
  for f in "$BUILD"/bin/*; do ln -sf "$f" "$d/bin/"; done
  rm -f "$d/bin/$1"
  printf '#!/bin/sh\n%s\n' "$2" >"$d/bin/$1"
  chmod +x "$d/bin/$1"
  echo "$d"
}

# expect WANT(0|1) WHAT TEXT BUILD CHECKS [ENV...]: runs one cell, checks the
# exit status, and that TEXT is in the cell's status.md (a failure's lines).
expect() {
  local want=$1 what=$2 text=$3 build=$4 checks=$5; shift 5
  local out=$t/out t0=$SECONDS
  env "$@" scripts/checkers.sh --build "$build" --out "$out" --cells "$cell" --checks "$checks" \
    >"$t/run.log" 2>&1
  local s=$?
  if [ "$s" != "$want" ]; then
    echo "checkers-selftest: FAIL: $what: exit $s, wanted $want"; sed 's/^/  /' "$t/run.log" | tail -20; fail=1
  elif [ -n "$text" ] && ! grep -qF -- "$text" "$out/status.md"; then
    echo "checkers-selftest: FAIL: $what: '$text' is not in status.md"; sed 's/^/  /' "$out/status.md" | tail -20
    fail=1
  else
    echo "checkers-selftest: $what: exit $s as wanted ($((SECONDS - t0)) s)"
  fi
}

expect 0 "real fsx, fsstress, posixcheck, twoclient, dbench, tar pass" "" "$BUILD" \
  "fsx fsstress posixcheck twoclient dbench tar"

b=$(fakebuild smbkit-fsx 'echo "smbkit-fsx: 9 ops"; echo "smbkit-fsx: FAIL seed=1 op=17 file=f"
echo "READ BAD DATA: offset = 0x1000, size = 0x200"; exit 1')
expect 1 "an fsx that finds bad data" "READ BAD DATA: offset = 0x1000" "$b" "fsx posixcheck"
# The row is drawn red in the report, linked to those lines.
"$PY" scripts/report_build.py --runs "$t/out/runs.tsv" --perf /dev/null --history "$t/none.jsonl" \
  --append "$t/h.jsonl" --out "$t/report" --quick >/dev/null
if [ $? != 1 ] || ! grep -q "<td>checker: fsx</td><td class='fail'[^>]*><a href='#fail-0'>" "$t/report/index.html" ||
  ! grep -q "<td>checker: posixcheck</td><td class='pass'" "$t/report/index.html"; then
  echo "checkers-selftest: FAIL: the report does not show fsx failed (linked) and posixcheck passed"; fail=1
else
  echo "checkers-selftest: the report shows the fsx row failed, linked to its lines, posixcheck passed"
fi

b=$(fakebuild smbkit-fsx 'exec sleep 600')
expect 1 "an fsx that hangs" "timed out after 5 s" "$b" fsx CHECK_TIMEOUT=5

mkdir -p "$t/path"
cat >"$t/path/tar" <<'S'
#!/bin/sh
# Extracts, then loses one file, and says nothing.
/usr/bin/tar "$@" || exit
case " $* " in *" -xf "*) while [ $# -gt 0 ]; do [ "$1" = -C ] && dir=$2; shift; done
  rm -f "$dir/tree/d000/f00001.dat" ;; esac
S
printf '#!/bin/sh\necho "ERROR: open ./clients/client0/~dmtmp/ACCESS/LABELS.PRN failed"\necho "Throughput 1 MB/sec"\n' \
  >"$t/path/dbench"
chmod +x "$t/path/tar" "$t/path/dbench"
expect 1 "a tar that loses a file" ": f00001.dat" "$BUILD" tar PATH="$t/path:$PATH"
expect 1 "a dbench that prints an ERROR line" "LABELS.PRN failed" "$BUILD" dbench PATH="$t/path:$PATH"

[ $fail = 0 ] && echo "checkers-selftest: ok"
exit $fail
