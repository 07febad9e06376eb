#!/bin/sh
# Renders a trace page (tools/trace/render.py) to a PNG with Debian's
# chromium, headless (no network, no display).
#   usage: screenshot.sh PAGE.html OUT.png [WIDTHxHEIGHT]
set -eu
size="${3:-1500x420}"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size="$(echo "$size" | tr x ,)" --screenshot="$2" "file://$(realpath "$1")" 2>/dev/null
