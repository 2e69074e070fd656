#!/usr/bin/env bash
# Installs what smbkit needs to build and test (Debian 12).
set -euo pipefail
pkgs=(build-essential cmake ninja-build clang libclang-rt-14-dev pkg-config
      libssl-dev libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev googletest liburing-dev
      help2man bash-completion   # the man page (scripts/gen-man.sh); scripts/check-install.sh runs the completion
      samba smbclient libfuse3-dev fuse3
      python3 fio dbench stress-ng   # python3: scripts/matrix_report.py; the rest: tests/fuse/workloads_test.cc
      python3-impacket samba-testsuite   # independent peers for smbkitd: impacket's client, smbtorture
      python3-matplotlib chromium        # scripts/report.sh: the charts, and the page checked in a headless browser
      iperf3)                            # bench/targets.sh: raw TCP over loopback beside the servers
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi
# The packaged smbd service is not ours: tests start their own on loopback.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet smbd 2>/dev/null; then
  systemctl stop smbd nmbd 2>/dev/null || true
fi
