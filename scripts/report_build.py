#!/usr/bin/env python3
"""Builds the report of scripts/report.sh from what its runs wrote:

  --runs FILE...   runs.tsv files of scripts/matrix.sh (the test grid)
  --perf FILE      perf.tsv of scripts/report_perf.sh (the samples)
  --history FILE   the recorded history (docs/perf-history.jsonl), read
  --append FILE    where this run's history line is appended
  --out DIR        index.html, report.json, charts/*.png

The grid: one row per test family (a gtest suite of the FUSE tests or of the
client library's integration tests, or a file-system checker of
scripts/checkers.sh), one column per server x dialect x security x cache
mode (the library has no cache mode: "lib"); each cell is pass, fail
(linked to the first lines of each failure) or n/a; a checker's cell says
how long it ran.
Figures: per (workload, client, server, security) the median, min and max
over the rounds. Charts (matplotlib): each workload's medians across the
recorded commits, and bars of clients x servers for this run.
Exit status 1 when the grid has a failure or no test ran.
"""

import argparse
import datetime
import html
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matrix_report  # noqa: E402  (Run, load: the gtest XML reader)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVERS = ("smbd", "smbkitd")


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
            "samba": sh("smbd", "--version").replace("Version ", "")}


# ---- the grid -------------------------------------------------------------

def parse_label(kind, label):
    """(server, dialect, security, cache) of a matrix.sh run label."""
    server = "smbd"
    if ":" in label:
        server, label = label.split(":", 1)
    parts = label.split("/")
    v, s = parts[0], parts[1]
    c = parts[2] if kind in ("fuse", "checker") and len(parts) > 2 else "lib"
    return server, v, s, c


KIND_NAMES = {"fuse": "mount", "integration": "library", "checker": "checker"}


def family(kind, test):
    suite = test.rsplit(".", 1)[0]
    return f"{KIND_NAMES.get(kind, kind)}: {suite}"


def grid(runs_files):
    runs = []
    for path in runs_files:
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 6:
                    r = matrix_report.Run(*parts)
                    matrix_report.load(r)
                    runs.append(r)
    cells = {}  # (family, column) -> dict
    columns = []
    failures = []  # {id, column, test, text}
    dv = {"2.1": 0, "3.0": 1, "3.1.1": 2}
    ds = {"plain": 0, "sign": 1, "seal": 2}
    dc = {"strict": 0, "none": 1, "loose": 2, "lib": 3}
    for r in runs:
        col = parse_label(r.kind, r.label)
        if col not in columns:
            columns.append(col)
        if r.na:
            continue
        if r.problem:
            fid = f"fail-{len(failures)}"
            failures.append({"id": fid, "column": " ".join(col), "test": f"{r.kind} (whole run)", "text": r.problem})
            cells[(f"{KIND_NAMES.get(r.kind, r.kind)}: (whole run)", col)] = \
                {"status": "fail", "passed": 0, "failed": 1, "na": 0, "total": 1, "first": fid, "seconds": 0.0,
                 "timed": False}
        for name, (status, secs, msg) in sorted(r.tests.items()):
            fam = family(r.kind, name)
            c = cells.setdefault((fam, col), {"status": "pass", "passed": 0, "failed": 0, "na": 0, "total": 0,
                                              "first": None, "seconds": 0.0, "timed": r.kind == "checker"})
            c["total"] += 1
            c["seconds"] = round(c["seconds"] + secs, 1)
            if status == "pass":
                c["passed"] += 1
            elif status == "FAIL":
                c["failed"] += 1
                fid = f"fail-{len(failures)}"
                failures.append({"id": fid, "column": " ".join(col), "test": name,
                                 "text": matrix_report.first_lines(msg)})
                c["first"] = c["first"] or fid
            elif status == "n/a":
                c["na"] += 1
    for c in cells.values():
        c["status"] = "fail" if c["failed"] else ("pass" if c["passed"] else "n/a")
    columns.sort(key=lambda k: (SERVERS.index(k[0]) if k[0] in SERVERS else 9, dv.get(k[1], 9), ds.get(k[2], 9),
                                dc.get(k[3], 9)))
    families = sorted({f for f, _ in cells})
    live = [r for r in runs if not r.na]
    total = sum(len(r.tests) for r in live)
    failed = sum(1 for r in live for s, _, _ in r.tests.values() if s == "FAIL") + sum(1 for r in live if r.problem)
    passed = sum(1 for r in live for s, _, _ in r.tests.values() if s == "pass")
    na = sum(1 for r in live for s, _, _ in r.tests.values() if s == "n/a")
    return {
        "columns": [{"server": a, "dialect": b, "security": c, "cache": d} for a, b, c, d in columns],
        "families": families,
        "cells": [{"family": f, "column": list(col), **c} for (f, col), c in sorted(cells.items())],
        "failures": failures,
        "summary": {"tests": total, "passed": passed, "failed": failed, "na": na,
                    "seconds": sum(r.seconds for r in runs), "ran": bool(runs_files),
                    # No grid asked for (--no-grid) is not a failure; a grid that ran no test is.
                    "ok": failed == 0 and (total > 0 or not runs_files)},
        "_na_columns": [list(parse_label(r.kind, r.label)) for r in runs if r.na],
    }


# ---- figures --------------------------------------------------------------

def figures(perf):
    samples = defaultdict(list)
    units = {}
    failed = defaultdict(int)
    with open(perf) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 7:
                continue
            w, c, s, sec, _, value, unit = p
            if value == "fail":
                failed[(w, c, s, sec)] += 1
                continue
            samples[(w, c, s, sec)].append(float(value))
            units[(w, c, s, sec)] = unit
    out = []
    for key in sorted(set(samples) | set(failed)):
        v = samples.get(key, [])
        w, c, s, sec = key
        out.append({"workload": w, "client": c, "server": s, "security": sec, "unit": units.get(key, ""),
                    "n": len(v), "failed": failed.get(key, 0),
                    "median": round(statistics.median(v), 3) if v else None,
                    "min": min(v) if v else None, "max": max(v) if v else None, "samples": v})
    return out


# ---- charts ---------------------------------------------------------------

def slug(s):
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-")


def chart_history(history, workload, path):
    series = defaultdict(dict)  # (client, server, sec) -> index -> (median, min, max)
    labels = []
    for i, h in enumerate(history):
        labels.append(h.get("code_commit", h["commit"])[:8] + ("*" if h.get("quick") else ""))
        for fg in h["figures"]:
            if fg["workload"] == workload and fg["median"] is not None:
                series[(fg["client"], fg["server"], fg["security"])][i] = (fg["median"], fg["min"], fg["max"])
                unit = fg["unit"]
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for key in sorted(series):
        xs = sorted(series[key])
        med = [series[key][x][0] for x in xs]
        lo = [series[key][x][0] - series[key][x][1] for x in xs]
        hi = [series[key][x][2] - series[key][x][0] for x in xs]
        ax.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=3, label=" ".join(key))
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, fontsize=8)
    ax.set_ylabel(unit + (" (lower is better)" if unit == "s" else " (higher is better)"))
    ax.set_title(f"{workload} across recorded commits of the code (median, min-max; * = quick run)", fontsize=9)
    ax.legend(fontsize=6, ncol=3, loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def chart_bars(figs, workload, path):
    rows = [f for f in figs if f["workload"] == workload and f["median"] is not None]
    if not rows:
        return False
    groups = sorted({(f["client"], f["security"]) for f in rows})
    servers = sorted({f["server"] for f in rows}, key=lambda s: SERVERS.index(s) if s in SERVERS else 9)
    width = 0.8 / len(servers)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(groups) + 2), 4.2))
    for j, s in enumerate(servers):
        xs, med, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            f = next((f for f in rows if (f["client"], f["security"]) == g and f["server"] == s), None)
            if f:
                xs.append(i + (j - (len(servers) - 1) / 2) * width)
                med.append(f["median"])
                lo.append(f["median"] - f["min"])
                hi.append(f["max"] - f["median"])
        ax.bar(xs, med, width, yerr=[lo, hi], capsize=3, label=s)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{c}\n{sec}" for c, sec in groups], fontsize=8)
    unit = rows[0]["unit"]
    ax.set_ylabel(unit + (" (lower is better)" if unit == "s" else " (higher is better)"))
    ax.set_title(f"{workload}: clients x servers, this commit (median, min-max)", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


# ---- the page -------------------------------------------------------------

CHECK_SCRIPT = """<script>
// For scripts/report_check.py: after the load event, mark each image with
// whether the browser decoded it, and the page as checked.
window.addEventListener('load', function () {
  for (const img of document.images)
    img.setAttribute('data-loaded', img.complete && img.naturalWidth > 0 ? 'yes' : 'no');
  document.body.setAttribute('data-checked', 'yes');
});
</script>"""


def page(rep, charts):
    e = html.escape
    g = rep["grid"]
    s = g["summary"]
    h = ["<!doctype html><html><head><meta charset='utf-8'><title>smbkit report</title>",
         "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
         "td,th{border:1px solid #999;padding:2px 5px;font-size:12px}th{background:#eee}"
         "pre{background:#f4f4f4;padding:6px;white-space:pre-wrap}img{max-width:100%}</style></head><body>",
         f"<h1>smbkit report: {e(rep['commit'][:12])}{' (quick)' if rep['quick'] else ''}</h1>",
         f"<p>Code (src, tools, CMakeLists.txt) last changed in {e(rep['code_commit'][:12])}.</p>",
         f"<p>{e(rep['date'])}; {e(str(rep['machine']['cores']))} cores, {e(rep['machine']['cpu'])}, "
         f"kernel {e(rep['machine']['kernel'])}, Samba {e(rep['machine']['samba'])}. "
         "Drawn from <a href='report.json'>report.json</a>.</p>",
         "<h2>Test grid</h2>",
         (f"<p style='font-weight:bold;background:{'#cfc' if s['ok'] else '#f99'}'>"
          f"{'PASS' if s['ok'] else 'FAIL'}: {s['passed']} passed, {s['failed']} failed, {s['na']} not applicable "
          f"of {s['tests']} test runs, {s['seconds']} s</p>" if s["ran"] else
          "<p id='nogrid' style='font-weight:bold;background:#ddd'>No test grid in this run (--no-grid).</p>"),
         "<p>Rows: test families (gtest suites of the mount and of the client library) and the file-system "
         "checkers of scripts/checkers.sh (fsx, fsstress, posixcheck, twoclient, dbench, tar on a fresh mount; "
         "the full run only, in one column per cache mode). Columns: server, "
         "dialect, security, cache mode (lib: the client library, which has no cache mode). A cell counts "
         "the tests of the family that passed (a checker's cell: how long it ran); a failure links to its "
         "first lines; '-' is a family not run in that column.</p>",
         "<table id='grid'><tr><th>family</th>" +
         "".join(f"<th>{e(c['server'])}<br>{e(c['dialect'])}<br>{e(c['security'])}<br>{e(c['cache'])}</th>"
                 for c in g["columns"]) + "</tr>"]
    cells = {(c["family"], tuple(c["column"])): c for c in g["cells"]}
    na_cols = {tuple(c) for c in g["_na_columns"]}
    for fam in g["families"]:
        row = [f"<td>{e(fam)}</td>"]
        for col in g["columns"]:
            key = (col["server"], col["dialect"], col["security"], col["cache"])
            c = cells.get((fam, key))
            if c is None and key in na_cols:
                row.append("<td class='na' style='background:#ddd'>n/a</td>")
            elif c is None:  # the family does not run in this column (a mount suite in a lib column)
                row.append("<td style='background:#f8f8f8;color:#aaa' title='not run in this column'>-</td>")
            elif c["status"] == "fail":
                took = f" {c['seconds']:g} s" if c.get("timed") else ""
                row.append(f"<td class='fail' style='background:#f99'><a href='#{c['first']}'>fail "
                           f"{c['failed']}/{c['total']}{took}</a></td>")
            elif c["status"] == "pass":
                extra = f" ({c['na']} n/a)" if c["na"] else ""
                took = f" {c['seconds']:g} s" if c.get("timed") else ""
                row.append(f"<td class='pass' style='background:#cfc'>pass {c['passed']}/{c['total']}{extra}{took}"
                           "</td>")
            else:
                row.append("<td class='na' style='background:#ddd'>n/a</td>")
        h.append("<tr>" + "".join(row) + "</tr>")
    h.append("</table>")
    h.append("<h3>Failures</h3>" + ("" if g["failures"] else "<p>None.</p>"))
    for f in g["failures"]:
        h.append(f"<h4 id='{f['id']}'>{e(f['column'])}: {e(f['test'])}</h4><pre>{e(f['text'])}</pre>")

    h.append("<h2>Performance</h2>")
    p = rep["perf"]
    h.append(f"<p>{e(p['note'])}</p>")
    h.append("<table id='figures'><tr><th>workload</th><th>client</th><th>server</th><th>security</th>"
             "<th>median</th><th>min</th><th>max</th><th>unit</th><th>rounds</th></tr>")
    for f in p["figures"]:
        if f["median"] is None:
            h.append(f"<tr style='background:#f99'><td>{e(f['workload'])}</td><td>{e(f['client'])}</td>"
                     f"<td>{e(f['server'])}</td><td>{e(f['security'])}</td><td colspan=5>failed "
                     f"{f['failed']} times</td></tr>")
            continue
        h.append(f"<tr><td>{e(f['workload'])}</td><td>{e(f['client'])}</td><td>{e(f['server'])}</td>"
                 f"<td>{e(f['security'])}</td><td>{f['median']:g}</td><td>{f['min']:g}</td><td>{f['max']:g}</td>"
                 f"<td>{e(f['unit'])}</td><td>{f['n']}{' (' + str(f['failed']) + ' failed)' if f['failed'] else ''}"
                 "</td></tr>")
    h.append("</table>")
    h.append("<h2>Charts</h2>")
    for c in charts:
        h.append(f"<h3>{e(c['title'])}</h3><img class='chart' src='{e(c['file'])}' alt='{e(c['title'])}'>")
    h.append(CHECK_SCRIPT)
    h.append("</body></html>")
    return "\n".join(h) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", nargs="*", default=[])
    ap.add_argument("--perf", required=True)
    ap.add_argument("--history", required=True)
    ap.add_argument("--append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--note", default="")
    a = ap.parse_args()

    commit = sh("git", "rev-parse", "HEAD") or "unknown"
    dirty = bool(sh("git", "status", "--porcelain", "--untracked-files=no"))
    # The last commit that changed what is measured (the sources and the
    # build), so that a commit touching only scripts or docs is charted as
    # the code it ran.
    code = sh("git", "log", "-1", "--format=%H", "--", "src", "tools", "CMakeLists.txt") or commit
    rep = {"commit": commit, "code_commit": code, "dirty": dirty, "quick": a.quick,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "machine": machine(), "grid": grid(a.runs),
           "perf": {"note": a.note, "figures": figures(a.perf)}}

    line = {k: rep[k] for k in ("commit", "code_commit", "dirty", "date", "quick", "machine")}
    line["grid"] = {k: rep["grid"]["summary"][k] for k in ("tests", "passed", "failed", "na")}
    line["note"] = a.note
    line["figures"] = [{k: v for k, v in f.items() if k != "samples"} for f in rep["perf"]["figures"]]
    with open(a.append, "a") as f:
        f.write(json.dumps(line, sort_keys=True) + "\n")

    history = []
    seen = set()
    for path in dict.fromkeys([a.history, a.append]):
        if os.path.exists(path):
            with open(path) as f:
                for l in f:
                    if l.strip() and l not in seen:
                        seen.add(l)
                        history.append(json.loads(l))

    os.makedirs(os.path.join(a.out, "charts"), exist_ok=True)
    charts = []
    workloads = list(dict.fromkeys(f["workload"] for f in rep["perf"]["figures"]))
    for w in workloads:
        fn = f"charts/bars-{slug(w)}.png"
        if chart_bars(rep["perf"]["figures"], w, os.path.join(a.out, fn)):
            charts.append({"file": fn, "title": f"{w}: clients x servers, this commit", "kind": "bars",
                           "workload": w})
        fn = f"charts/history-{slug(w)}.png"
        if chart_history(history, w, os.path.join(a.out, fn)):
            charts.append({"file": fn, "title": f"{w} across recorded commits", "kind": "history", "workload": w})
    rep["charts"] = charts
    rep["history_file"] = os.path.relpath(a.history, a.out)

    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump(rep, f, indent=1, sort_keys=True)
    with open(os.path.join(a.out, "index.html"), "w") as f:
        f.write(page(rep, charts))
    s = rep["grid"]["summary"]
    print(f"report: {os.path.join(a.out, 'index.html')}: grid "
          f"{('PASS' if s['ok'] else 'FAIL') if s['ran'] else 'not run'} "
          f"({s['passed']} passed, {s['failed']} failed), {len(rep['perf']['figures'])} figures, "
          f"{len(charts)} charts")
    return 0 if s["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
