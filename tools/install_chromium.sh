#!/usr/bin/env bash
# Install what the browser tests need besides the Python packages: Debian's Chromium (Playwright
# drives it via executable_path; never `playwright install`) and a font for readable screenshots.
# Needs root (apt-get). Does nothing when /usr/bin/chromium is already there.
set -euo pipefail

if [[ -x /usr/bin/chromium ]]; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
    exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
    echo "error: installing chromium needs root; run: sudo apt-get install -y chromium" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium fonts-liberation
