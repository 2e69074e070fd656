#!/usr/bin/env python3
"""Checks a report of scripts/report.sh in a real browser: headless Chromium
loads DIR/index.html and dumps the DOM after the load event; the page's own
script has marked each image with whether the browser decoded it
(data-loaded). Passes when the page was checked, the grid table has a row of
cells, and every chart report.json lists is in the DOM, was decoded by the
browser and is a PNG file of non-zero size on disk.

  scripts/report_check.py DIR     exit status 0 (ok) or 1, with the reasons
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.body = {}
        self.imgs = []  # attribute dicts
        self.grid_rows = 0
        self.grid_cells = 0
        self._in_grid = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "img":
            self.imgs.append(a)
        elif tag == "table" and a.get("id") == "grid":
            self._in_grid = 1
        elif tag == "table" and self._in_grid:
            self._in_grid += 1
        elif self._in_grid and tag == "tr":
            self.grid_rows += 1
        elif self._in_grid and tag == "td":
            self.grid_cells += 1

    def handle_endtag(self, tag):
        if tag == "table" and self._in_grid:
            self._in_grid -= 1


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = os.path.abspath(sys.argv[1])
    problems = []
    try:
        with open(os.path.join(d, "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        print(f"report_check: FAIL: no readable report.json in {d}: {e}")
        return 1
    exe = browser()
    if not exe:
        print("report_check: FAIL: no chromium (apt-get install chromium; scripts/install-deps.sh)")
        return 1
    with tempfile.TemporaryDirectory(prefix="report-check.") as profile:
        try:
            p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                                "--allow-file-access-from-files", "--dump-dom", f"file://{d}/index.html"],
                               capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            print("report_check: FAIL: chromium did not finish in 120 s")
            return 1
    if p.returncode != 0 or "<html" not in p.stdout:
        print(f"report_check: FAIL: chromium exited {p.returncode}; its error output:\n{p.stderr[-2000:]}")
        return 1
    dom = Dom()
    dom.feed(p.stdout)
    if dom.body.get("data-checked") != "yes":
        problems.append("the page's load script did not run (body has no data-checked='yes')")
    if rep["grid"]["summary"].get("ran", True) and (dom.grid_rows < 2 or dom.grid_cells < 2):
        problems.append(f"the grid table is missing or empty ({dom.grid_rows} rows, {dom.grid_cells} cells)")
    by_src = {i.get("src"): i for i in dom.imgs}
    if not rep.get("charts"):
        problems.append("report.json lists no charts")
    for c in rep.get("charts", []):
        img = by_src.get(c["file"])
        if img is None:
            problems.append(f"chart {c['file']} is not in the page")
            continue
        if img.get("data-loaded") != "yes":
            problems.append(f"chart {c['file']} did not load in the browser (data-loaded={img.get('data-loaded')})")
        path = os.path.join(d, c["file"])
        size = png_size(path) if os.path.exists(path) else None
        if not size or 0 in size:
            problems.append(f"chart {c['file']} is not a PNG of non-zero size on disk")
    for src, img in by_src.items():
        if img.get("data-loaded") != "yes" and src not in {c["file"] for c in rep.get("charts", [])}:
            problems.append(f"image {src} did not load in the browser")
    if problems:
        print("report_check: FAIL:\n  " + "\n  ".join(problems))
        return 1
    print(f"report_check: ok: {dom.grid_rows - 1} grid rows, {len(rep['charts'])} charts loaded in {exe}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
