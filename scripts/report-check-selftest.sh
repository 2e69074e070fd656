#!/usr/bin/env bash
# scripts/report_check.py's own test: a report built from a small fixture
# (one passing and one failing gtest run, three samples) passes the browser
# check; the same report with a chart file deleted, with a chart's <img>
# removed from the page, or without the grid table fails it.
#
#   scripts/report-check-selftest.sh     (about 30 s: four Chromium loads)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3; [ -x $PY ] || PY=python3
t=$(mktemp -d "${TMPDIR:-/tmp}/report-selftest.XXXX")
trap 'rm -rf "$t"' EXIT
cat >"$t/ok.xml" <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="0"><testsuite name="Files" tests="2">
<testcase name="ReadBack" status="run" result="completed" time="0.1" classname="Files"/>
<testcase name="Rename" status="run" result="completed" time="0.1" classname="Files"/>
</testsuite></testsuites>
X
cat >"$t/bad.xml" <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="1"><testsuite name="Mount" tests="1">
<testcase name="Statfs" status="run" result="completed" time="0.1" classname="Mount">
<failure message="expected 1, got 2">expected 1, got 2</failure></testcase>
</testsuite></testsuites>
X
printf 'integration\t3.0/sign\t%s\t%s\t0\t1\nfuse\tsmbkitd:3.1.1/seal/loose\t%s\t%s\t1\t1\n' \
  "$t/ok.xml" "$t/ok.log" "$t/bad.xml" "$t/bad.log" >"$t/runs.tsv"
printf 'seqread\tsmbkit\tsmbd\tplain\t1\t400\tMB/s\nseqread\tsmbclient\tsmbd\tplain\t1\t300\tMB/s\nmeta\tsmbkit\tsmbd\tplain\t1\t1.5\ts\n' \
  >"$t/perf.tsv"
fail=0
build() {
  rm -rf "$t/out" "$t/h.jsonl"
  "$PY" scripts/report_build.py --runs "$t/runs.tsv" --perf "$t/perf.tsv" --history "$t/none.jsonl" \
    --append "$t/h.jsonl" --out "$t/out" --quick --note selftest >/dev/null
  [ $? = 1 ] || { echo "report-check-selftest: FAIL: a grid with a failing test did not exit 1"; fail=1; }
  grep -q "href='#fail-0'" "$t/out/index.html" ||
    { echo "report-check-selftest: FAIL: the failing cell does not link to its failure"; fail=1; }
}
expect() {  # WANT(0|1) WHAT
  "$PY" scripts/report_check.py "$t/out" >"$t/check.out" 2>&1
  local s=$?
  if [ "$s" != "$1" ]; then
    echo "report-check-selftest: FAIL: $2: exit $s, wanted $1"; sed 's/^/  /' "$t/check.out"; fail=1
  else
    echo "report-check-selftest: $2: exit $s as wanted: $(head -3 "$t/check.out" | tr '\n' ' ')"
  fi
}
build; expect 0 "the whole report"
build; rm "$t/out/charts/bars-seqread.png"; expect 1 "a chart file missing"
build; sed -i "s|<img class='chart' src='charts/history-meta.png'[^>]*>||" "$t/out/index.html"
expect 1 "a chart's <img> missing from the page"
build; sed -i "s|<table id='grid'>|<table id='nogrid'>|" "$t/out/index.html"; expect 1 "no grid table"
[ $fail = 0 ] && echo "report-check-selftest: ok"
exit $fail
