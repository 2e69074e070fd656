#!/usr/bin/env python3
"""Builds the matrix status table (Markdown and HTML) from the gtest XML
files scripts/matrix.sh wrote. Standard library only.

Input: runs.tsv, one line per gtest run:
  kind  label  xml  log  exit-status|na  seconds
Output: a summary per cell, a grid (one row per test, one column per cell:
pass/fail and time), and every failure with the first lines of its output.
A test that skips itself with the message "not applicable in this cell:
REASON" (IT_NOT_APPLICABLE_IF in tests/integration/fixture.h) is shown as
n/a with its reason, apart from other skips: it can never pass in that cell
(a share that requires encryption in a 2.x cell) and must not look green.
Exit status 1 if any test failed, any run crashed or left no XML, or no
test ran at all.
"""

import argparse
import html
import os
import sys
import xml.etree.ElementTree as ET

FIRST_LINES = 8
NA_PREFIX = "not applicable in this cell:"


class Run:
    def __init__(self, kind, label, xml, log, rc, seconds):
        self.kind, self.label, self.xml, self.log = kind, label, xml, log
        self.na = rc == "na"
        self.rc = None if self.na else int(rc)
        self.seconds = int(seconds or 0)
        self.tests = {}  # "Suite.Name" -> (status, seconds, message)
        self.problem = ""  # a run-level failure (crash, timeout, no XML)

    @property
    def column(self):
        return f"{self.kind} {self.label}"


def first_lines(text, n=FIRST_LINES):
    lines = [l for l in (text or "").splitlines() if l.strip()]
    more = len(lines) - n
    return "\n".join(lines[:n]) + (f"\n... ({more} more lines)" if more > 0 else "")


def log_tail(path, n=FIRST_LINES):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-n:])


def load(run):
    if run.na:
        return
    if not os.path.exists(run.xml):
        run.problem = f"no XML written (exit status {run.rc}); the end of its log:\n{log_tail(run.log)}"
        return
    try:
        root = ET.parse(run.xml).getroot()
    except ET.ParseError as e:
        run.problem = f"unreadable XML ({e}); the end of its log:\n{log_tail(run.log)}"
        return
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            if case.get("status", "run") != "run" or case.get("result") == "skipped":
                status = "skip"
            elif case.find("failure") is not None or case.find("error") is not None:
                status = "FAIL"
            else:
                status = "pass"
            skipped = case.find("skipped")
            if skipped is not None:
                status = "skip"
            msgs = [f.get("message") or f.text or "" for f in case.findall("failure") + case.findall("error")]
            if status == "skip" and skipped is not None:
                why = skipped.get("message") or skipped.text or ""
                if NA_PREFIX in why:
                    status = "n/a"
                    msgs = [why[why.index(NA_PREFIX) + len(NA_PREFIX):].strip()]
            name = f"{case.get('classname')}.{case.get('name')}"
            run.tests[name] = (status, float(case.get("time", "0") or 0), "\n".join(msgs))
    if run.rc != 0 and not any(s == "FAIL" for s, _, _ in run.tests.values()):
        # Every recorded test passed but the binary did not: a crash in
        # teardown, a timeout, a leak report. Never report that as green.
        run.problem = f"exit status {run.rc} with no failing test; the end of its log:\n{log_tail(run.log)}"


def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--html", required=True)
    ap.add_argument("--slice", default="")
    a = ap.parse_args()

    runs = []
    with open(a.runs) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 6:
                runs.append(Run(*parts))
    for r in runs:
        load(r)

    live = [r for r in runs if not r.na]
    names = sorted({n for r in live for n in r.tests})
    total = sum(len(r.tests) for r in live)
    passed = sum(1 for r in live for s, _, _ in r.tests.values() if s == "pass")
    failed = sum(1 for r in live for s, _, _ in r.tests.values() if s == "FAIL")
    skipped = sum(1 for r in live for s, _, _ in r.tests.values() if s == "skip")
    not_app = sum(1 for r in live for s, _, _ in r.tests.values() if s == "n/a")
    problems = [r for r in live if r.problem]
    ok = failed == 0 and not problems and total > 0
    verdict = "PASS" if ok else "FAIL"
    summary = (f"{verdict}: {passed} passed, {failed} failed, {not_app} not applicable, {skipped} skipped, "
               f"{len(problems)} runs broken; {total} test runs in {len(live)} gtest runs "
               f"({len(runs) - len(live)} cells not applicable); "
               f"{sum(r.seconds for r in runs)} s")

    failures = []  # (column, test, text)
    for r in live:
        if r.problem:
            failures.append((r.column, "(whole run)", r.problem))
        for n, (s, _, m) in sorted(r.tests.items()):
            if s == "FAIL":
                failures.append((r.column, n, first_lines(m)))

    not_applicable = []  # (column, test, reason)
    for r in live:
        for n, (s, _, m) in sorted(r.tests.items()):
            if s == "n/a":
                not_applicable.append((r.column, n, m))

    def cell_text(r, n):
        if r.na:
            return "n/a"
        if n not in r.tests:
            return ""
        s, t, _ = r.tests[n]
        return "n/a" if s == "n/a" else f"{s} {t:.2f}s"

    # Markdown
    md = [f"# smbkit test matrix ({a.slice} slice)", "", f"**{summary}**", "",
          "Cells are dialect/security/cache (fuse: the mount; integration: the client "
          "library, which has no cache mode). 2.1 with seal is not applicable: SMB 2.1 "
          "has no encryption; so is a test that says it cannot pass in a cell (listed below).", "",
          "| run | cell | tests | passed | failed | n/a | time |", "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in runs:
        if r.na:
            md.append(f"| {r.kind} | {r.label} | n/a | | | | |")
            continue
        p = sum(1 for s, _, _ in r.tests.values() if s == "pass")
        fl = sum(1 for s, _, _ in r.tests.values() if s == "FAIL") + (1 if r.problem else 0)
        na = sum(1 for s, _, _ in r.tests.values() if s == "n/a")
        md.append(f"| {r.kind} | {r.label} | {len(r.tests)} | {p} | {fl} | {na} | {r.seconds} s |")
    md += ["", "## Every test", "", "| test | " + " | ".join(r.column for r in runs) + " |",
           "| --- |" + " --- |" * len(runs)]
    for n in names:
        md.append(f"| {n} | " + " | ".join(cell_text(r, n) for r in runs) + " |")
    md += ["", "## Not applicable in a cell", ""]
    if not not_applicable:
        md.append("None.")
    for col, n, why in not_applicable:
        md.append(f"- {col}: {md_escape(n)}: {md_escape(why)}")
    md += ["", "## Failures", ""]
    if not failures:
        md.append("None.")
    for col, n, text in failures:
        md += [f"### {col}: {md_escape(n)}", "", "```", text, "```", ""]
    with open(a.md, "w") as f:
        f.write("\n".join(md) + "\n")

    # HTML
    e = html.escape
    color = {"pass": "#cfc", "FAIL": "#f99", "skip": "#eee", "n/a": "#ddd"}
    h = ["<!doctype html><html><head><meta charset='utf-8'><title>smbkit test matrix</title>",
         "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
         "td,th{border:1px solid #999;padding:2px 6px;font-size:13px}"
         "pre{background:#f4f4f4;padding:6px}</style></head><body>",
         f"<h1>smbkit test matrix ({e(a.slice)} slice)</h1>",
         f"<p style='font-weight:bold;background:{'#cfc' if ok else '#f99'}'>{e(summary)}</p>",
         "<table><tr><th>run</th><th>cell</th><th>tests</th><th>passed</th><th>failed</th><th>n/a</th><th>time</th></tr>"]
    for r in runs:
        if r.na:
            h.append(f"<tr style='background:#ddd'><td>{e(r.kind)}</td><td>{e(r.label)}</td>"
                     "<td colspan=5>not applicable (SMB 2.1 has no encryption)</td></tr>")
            continue
        p = sum(1 for s, _, _ in r.tests.values() if s == "pass")
        fl = sum(1 for s, _, _ in r.tests.values() if s == "FAIL") + (1 if r.problem else 0)
        na = sum(1 for s, _, _ in r.tests.values() if s == "n/a")
        bg = "#cfc" if fl == 0 and r.tests else "#f99"
        h.append(f"<tr style='background:{bg}'><td>{e(r.kind)}</td><td>{e(r.label)}</td><td>{len(r.tests)}</td>"
                 f"<td>{p}</td><td>{fl}</td><td>{na}</td><td>{r.seconds} s</td></tr>")
    h.append("</table><h2>Every test</h2><table><tr><th>test</th>" +
             "".join(f"<th>{e(r.kind)}<br>{e(r.label)}</th>" for r in runs) + "</tr>")
    for n in names:
        row = [f"<td>{e(n)}</td>"]
        for r in runs:
            t = cell_text(r, n)
            key = "n/a" if r.na or t == "n/a" else (t.split(" ")[0] if t else "")
            row.append(f"<td style='background:{color.get(key, '#fff')}'>{e(t)}</td>")
        h.append("<tr>" + "".join(row) + "</tr>")
    h.append("</table><h2>Not applicable in a cell</h2>")
    h.append("<ul>" + "".join(f"<li>{e(col)}: {e(n)}: {e(why)}</li>" for col, n, why in not_applicable) + "</ul>"
             if not_applicable else "<p>None.</p>")
    h.append("<h2>Failures</h2>")
    if not failures:
        h.append("<p>None.</p>")
    for col, n, text in failures:
        h.append(f"<h3>{e(col)}: {e(n)}</h3><pre>{e(text)}</pre>")
    h.append("</body></html>")
    with open(a.html, "w") as f:
        f.write("\n".join(h) + "\n")

    print(summary)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
