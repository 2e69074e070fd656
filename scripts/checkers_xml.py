#!/usr/bin/env python3
"""Writes one cell of scripts/checkers.sh as gtest-style XML, the format
scripts/matrix_report.py reads: one testcase per checker (classname = the
checker, the grid's row), pass, failure (with the reason and the first
telling lines of the checker's log) or skipped "not applicable in this
cell: REASON".

  checkers_xml.py RESULTS.tsv OUT.xml LABEL CHECKS

RESULTS.tsv: "check<TAB>pass|fail|na<TAB>seconds<TAB>log<TAB>reason" lines.
A check named in CHECKS (space-separated) with no line did not run (the
cell was stopped or its server did not start) and is a failure.
Exit status 1 if any check failed or did not run.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

FIRST_LINES = 12
TELLING = re.compile(r"FAIL|ERROR|[Ee]rror|[Ff]ailed|differ|Only in|mismatch|MISMATCH|unexpected|timed out")


def first_lines(log):
    """From the first line of a log that says what went wrong (a checker's
    FAIL header is followed by the reason and the last operations), else
    the log's end."""
    try:
        with open(log, errors="replace") as f:
            lines = [l.rstrip("\n") for l in f if l.strip()]
    except OSError:
        return "(no log)"
    first = next((i for i, l in enumerate(lines) if TELLING.search(l) and "barrier semaphore" not in l), None)
    # A case-by-case checker's passing cases say nothing about the failure.
    picked = ([l for l in lines[first:] if not l.startswith("PASS ")][:FIRST_LINES] if first is not None
              else lines[-FIRST_LINES:])
    return "\n".join(picked) + f"\n(log: {log})"


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    results, out, label, checks = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
    rows = {}
    if os.path.exists(results):
        with open(results) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) == 5:
                    rows[p[0]] = p
    suites = ET.Element("testsuites", name="checkers")
    suite = ET.SubElement(suites, "testsuite", name=f"checkers {label}")
    bad = 0
    # A mount that failed before any check ran is reported as its own row.
    names = (["mount"] if "mount" in rows else []) + checks
    for name in names:
        p = rows.get(name)
        case = ET.SubElement(suite, "testcase", classname=name, name="run", status="run",
                             time=(p[2] if p else "0"))
        if p is None:
            bad += 1
            reason = "did not run (the cell was stopped, or its server or mount did not come up)"
            if "mount" in rows:
                reason = "did not run: " + rows["mount"][4]
            ET.SubElement(case, "failure", message=reason)
        elif p[1] == "na":
            ET.SubElement(case, "skipped", message=f"not applicable in this cell: {p[4]}")
        elif p[1] == "fail":
            bad += 1
            ET.SubElement(case, "failure", message=f"{p[4]}\n{first_lines(p[3])}")
    ET.ElementTree(suites).write(out, encoding="utf-8", xml_declaration=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
