#!/usr/bin/env bash
# The file-system checkers as rows of the report's test grid: each checker
# runs on a fresh smbkit mount of a fresh server, once per server x cell,
# bounded in time, and is recorded as matrix.sh records a gtest run
# (OUT/runs.tsv, kind "checker", with gtest-style XML), so that
# scripts/report_build.py and scripts/matrix_report.py draw it as rows.
#
#   scripts/checkers.sh [--build DIR] [--out DIR] [--servers "smbd smbkitd"]
#                       [--cells "2.1/plain/strict ..."] [--checks "fsx tar ..."]
# Cells: dialect/security/cache; by default the matrix's diagonal, one per
# cache mode: 2.1/plain/strict, 3.0/sign/none, 3.1.1/seal/loose (each
# dialect, security and cache mode once).
# Checks (the rows), each bounded:
#   fsx        smbkit-fsx, FSX_OPS operations (20000) or FSX_SECS (60 s)
#   fsstress   smbkit-fsstress, FSS_PROCS (4) x FSS_OPS (2000) or FSS_SECS (60 s)
#   posixcheck smbkit-posixcheck: the POSIX errno/behaviour cases
#   twoclient  smbkit-twoclient --checks data --strict on a second mount of
#              the same share and cache mode; n/a with cache=loose, which
#              keeps page caches across opens (no coherence promised)
#   twoclient-locks  smbkit-twoclient --checks locks,flock on two mounts
#   dbench     Debian's dbench, DBENCH_CLIENTS (4) clients for DBENCH_SECS (20 s)
#              with its client.txt load; any ERROR or failed line fails it
#   tar        a tree of TAR_FILES (2000) small files and two large ones
#              (1 and 9 MiB) extracted through the mount with tar -x, then
#              diff -r against the source, through the mount and on the
#              server's disk, and removed again with rm -r
# Every check has a kill timeout (CHECK_TIMEOUT, 300 s); a check that hits
# it fails with "timed out". A check that leaves the mount gone fails and
# the mount is made again for the next one.
# Exit status: 0 if every check passed (or was n/a) in every cell, else 1.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ "${CHECKERS_INNER:-}" != 1 ]; then
  build=$ROOT/build out='' servers=smbd
  cells="2.1/plain/strict 3.0/sign/none 3.1.1/seal/loose"
  checks="fsx fsstress posixcheck twoclient twoclient-locks dbench tar"
  while (($#)); do
    case $1 in
      --build) build=${2:?}; shift ;;
      --out) out=${2:?}; shift ;;
      --servers) servers=${2:?}; shift ;;
      --cells) cells=${2:?}; shift ;;
      --checks) checks=${2:?}; shift ;;
      -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) echo "checkers.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
  done
  build=$(cd "$build" && pwd)
  for b in smbkit smbkit-samba smbkit-fsx smbkit-fsstress smbkit-posixcheck smbkit-twoclient; do
    [ -x "$build/bin/$b" ] || { echo "checkers.sh: $build/bin/$b not built" >&2; exit 2; }
  done
  for c in $checks; do
    case $c in fsx|fsstress|posixcheck|twoclient|twoclient-locks|dbench|tar) ;;
      *) echo "checkers.sh: unknown check '$c'" >&2; exit 2 ;; esac
  done
  for s in $servers; do case $s in smbd|smbkitd) ;; *) echo "checkers.sh: server $s?" >&2; exit 2 ;; esac; done
  out=${out:-$build/checkers}
  rm -rf "$out"; mkdir -p "$out"
  out=$(cd "$out" && pwd)
  runs=$out/runs.tsv
  : >"$runs"
  status=0
  n=0
  for srv in $servers; do
    for cell in $cells; do
      n=$((n + 1))
      IFS=/ read -r v s c <<<"$cell"
      pfx=; [ "$srv" = smbd ] || pfx="$srv:"
      label="$pfx$v/$s/$c"
      base=$out/checker-${label//[\/:]/_}
      if [ "$v" = 2.1 ] && [ "$s" = seal ]; then
        printf 'checker\t%s\t\t\tna\t0\n' "$label" >>"$runs"
        continue
      fi
      mopts="vers=$v,cache=$c"
      [ "$s" = plain ] || mopts="vers=$v,$s,cache=$c"
      echo "== checkers: $label"
      t0=$SECONDS
      mkdir -p "$base.d"
      # The cell's bound: every check's timeout, and a minute to start and stop.
      ncheck=$(wc -w <<<"$checks")
      CHECKERS_INNER=1 BIN=$build/bin CELL_DIR=$base.d CHECKS=$checks MOUNT_OPTS=$mopts CACHE=$c \
        CELL_SEED=$((${SEED:-1} + 100 * n)) \
        timeout -k 10 $((ncheck * ${CHECK_TIMEOUT:-300} + 60)) \
        "$build/bin/smbkit-samba" --server "$srv" -- "$0" >"$base.log" 2>&1
      rc=$?
      /usr/bin/python3 "$ROOT/scripts/checkers_xml.py" "$base.d/results.tsv" "$base.xml" "$label" "$checks" ||
        { [ $rc != 0 ] || rc=1; }
      printf 'checker\t%s\t%s\t%s\t%s\t%s\n' "$label" "$base.xml" "$base.log" "$rc" "$((SECONDS - t0))" >>"$runs"
      [ $rc = 0 ] || status=1
      tail -n +1 "$base.d/results.tsv" 2>/dev/null | cut -f1-3 | sed 's/^/   /'
    done
  done
  /usr/bin/python3 "$ROOT/scripts/matrix_report.py" --runs "$runs" --slice checkers --md "$out/status.md" \
    --html "$out/status.html" || status=1
  echo "checkers: $out/status.md, $out/status.html"
  exit $status
fi

# ---- inside a fresh server: SMBKIT_PORT, SMBKIT_PASSWORD, SMBKIT_SAMBA_DIR.
target="//127.0.0.1:$SMBKIT_PORT/share"
share=$SMBKIT_SAMBA_DIR/share
results=$CELL_DIR/results.tsv
: >"$results"
work=$(mktemp -d "${TMPDIR:-/tmp}/smbkit-checkers.XXXXXX")
mounts=()
cleanup() {
  for m in "${mounts[@]+"${mounts[@]}"}"; do
    fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT

MP=
mount_share() {  # -> MP, a fresh mount with the cell's options
  MP=$(mktemp -d "$work/mp.XXXX")
  "$BIN/smbkit" mount "$target" "$MP" -o "username=smbkit,$MOUNT_OPTS" >>"$CELL_DIR/mount.log" 2>&1 || return 1
  mounts+=("$MP")
  for _ in $(seq 100); do mountpoint -q "$MP" && return 0; sleep 0.1; done
  return 1
}
umount_share() { fusermount3 -u "$1" 2>/dev/null || fusermount3 -uz "$1" 2>/dev/null; }

record() {  # check status seconds log [reason]
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" >>"$results"
}

# The tree for tar: TAR_FILES small files (0-20 KiB, some empty) in
# directories of 50, and two large files across many pages.
make_tree() {
  /usr/bin/python3 - "$1" "${TAR_FILES:-2000}" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
r = random.Random(7)
pool = r.randbytes(64 * 1024)
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 50))
    os.makedirs(d, exist_ok=True)
    size = 0 if i % 37 == 0 else r.randint(1, 20 * 1024)
    off = r.randint(0, len(pool) - size)
    with open(os.path.join(d, "f%05d.dat" % i), "wb") as f:
        f.write(pool[off:off + size])
for name, mib in (("large1", 1), ("large9", 9)):
    with open(os.path.join(root, name + ".bin"), "wb") as f:
        f.write(r.randbytes(mib << 20))
PY
}

mount_share || { record mount fail 0 "$CELL_DIR/mount.log" "mount -o $MOUNT_OPTS failed"; exit 1; }
mp=$MP
seed=$CELL_SEED
bound=${CHECK_TIMEOUT:-300}
for check in $CHECKS; do
  log=$CELL_DIR/$check.log
  dir=$mp/$check
  mkdir -p "$dir" 2>"$log" || { record "$check" fail 0 "$log" "mkdir on the mount failed"; continue; }
  why=
  t0=$SECONDS
  case $check in
    fsx)
      timeout -k 5 "$bound" "$BIN/smbkit-fsx" --seed "$seed" --ops "${FSX_OPS:-20000}" \
        --time-limit "${FSX_SECS:-60}" --log "$CELL_DIR/fsx.replay" "$dir" >"$log" 2>&1
      rc=$?
      [ $rc = 0 ] && ! grep -q '^summary:' "$log" && why="no summary line" ;;
    fsstress)
      timeout -k 5 "$bound" "$BIN/smbkit-fsstress" -p "${FSS_PROCS:-4}" -n "${FSS_OPS:-2000}" --seed "$seed" \
        --time-limit "${FSS_SECS:-60}" --tolerate "${FSS_TOLERATE:-EACCES,EBUSY}" "$dir" >"$log" 2>&1
      rc=$?
      [ $rc = 0 ] && ! grep -q '^summary:' "$log" && why="no summary line" ;;
    posixcheck)
      timeout -k 5 "$bound" "$BIN/smbkit-posixcheck" "$dir" >"$log" 2>&1
      rc=$?
      [ $rc = 0 ] && ! grep -q '^summary: pass=[0-9]* fail=0' "$log" && why="no 'fail=0' summary" ;;
    twoclient|twoclient-locks)
      groups=data; [ $check = twoclient-locks ] && groups=locks,flock
      if [ $check = twoclient ] && [ "$CACHE" = loose ]; then
        record "$check" na 0 "$log" "cache=loose keeps page caches across opens: no coherence between mounts is promised"
        continue
      fi
      if ! mount_share; then
        record "$check" fail 0 "$CELL_DIR/mount.log" "the second mount failed"
        continue
      fi
      mp2=$MP
      timeout -k 5 "$bound" "$BIN/smbkit-twoclient" --checks "$groups" --strict --wait "${TC_WAIT:-3}" \
        --release-wait 5 "$dir" "$mp2/$check" >"$log" 2>&1
      rc=$?
      umount_share "$mp2"
      [ $rc = 0 ] && ! grep -q '^summary: pass=[0-9]* fail=0' "$log" && why="no 'fail=0' summary" ;;
    dbench)
      if ! command -v dbench >/dev/null; then
        record "$check" fail 0 "$log" "dbench is not installed (scripts/install-deps.sh)"
        continue
      fi
      timeout -k 5 "$bound" dbench -c /usr/share/dbench/client.txt -D "$dir" -t "${DBENCH_SECS:-20}" \
        "${DBENCH_CLIENTS:-4}" >"$log" 2>&1
      rc=$?
      # dbench may exit 0 after a failed operation: its ERROR / failed lines
      # count (but "failed to create barrier semaphore", which dbench 4.00
      # prints whenever semget returns id 0, is not one).
      bad=$(grep -E 'ERROR|[Ff]ailed' "$log" | grep -vc 'barrier semaphore')
      if [ $rc = 0 ] && ! grep -q Throughput "$log"; then why="no Throughput line"
      elif [ $rc = 0 ] && [ "$bad" != 0 ]; then why="$bad ERROR/failed lines"; fi ;;
    tar)
      rm -rf "$work/tree" && mkdir -p "$work/tree" && make_tree "$work/tree" &&
        tar -C "$work" -cf "$work/tree.tar" tree
      {
        timeout -k 5 "$bound" tar -C "$dir" -xf "$work/tree.tar" --no-same-owner &&
          echo "== diff -r through the mount" && diff -r "$work/tree" "$dir/tree" &&
          echo "== diff -r on the server's disk" && diff -r "$work/tree" "$share/$check/tree" &&
          echo "== rm -r through the mount" && timeout -k 5 "$bound" rm -r "$dir/tree" &&
          { [ ! -e "$share/$check/tree" ] || { echo "tree/ is still on the server after rm -r"; false; }; }
      } >"$log" 2>&1
      rc=$? ;;
  esac
  secs=$((SECONDS - t0))
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then why="timed out after $bound s"
  elif [ "$rc" != 0 ] && [ -z "$why" ]; then why="exit status $rc"; fi
  if ! mountpoint -q "$mp"; then
    why="${why:+$why; }the mount was gone afterwards"
    mount_share && mp=$MP
  fi
  if [ -n "$why" ]; then record "$check" fail "$secs" "$log" "$why"; else record "$check" pass "$secs" "$log"; fi
done
grep -q $'\tfail\t' "$results" && exit 1
exit 0
