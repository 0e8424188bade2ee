#!/bin/sh
# docs/img/wireshark-xcp.png: the Wireshark GUI (Debian wireshark-qt, under Xvfb) on a
# run's capture with tools/wireshark/xcp.lua, the XCP packets filtered and one packet's
# XCP shim expanded -- the screenshot docs/captures.md shows. Not part of make test
# (tests/wireshark checks the dissector with tshark); rerun when the dissector changes.
#
#   tools/wireshark-screenshot.sh RUN/captures/<id>.pcapng [OUT.png]
#
# Needs (installed when missing): wireshark-qt xvfb x11-apps imagemagick xdotool.
set -eu
pcap=${1:?usage: $0 CAPTURE.pcapng [OUT.png]}
out=${2:-docs/img/wireshark-xcp.png}
here=$(cd "$(dirname "$0")/.." && pwd)
[ -r "$pcap" ] || { echo "$0: $pcap: not readable" >&2; exit 2; }

need=""
for tool in wireshark:wireshark-qt Xvfb:xvfb xwd:x11-apps convert:imagemagick xdotool:xdotool; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need="$need ${tool#*:}"
done
if [ -n "$need" ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need >/dev/null
fi

# A private configuration: a fixed main window, packet list over packet details.
conf=$(mktemp -d)
mkdir -p "$conf/wireshark"
printf '%s\n' "gui.geometry_main_x: 0" "gui.geometry_main_y: 0" \
  "gui.geometry_main_width: 1200" "gui.geometry_main_height: 900" \
  "gui.geometry_main_maximized: FALSE" >"$conf/wireshark/recent_common"
printf '%s\n' "gui.layout_content_3: NONE" >"$conf/wireshark/preferences"

display=:77
Xvfb "$display" -screen 0 1200x900x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
ws=""
cleanup() { [ -n "$ws" ] && kill "$ws" 2>/dev/null; kill "$xvfb" 2>/dev/null; rm -rf "$conf"; }
trap cleanup EXIT INT TERM
sleep 1
# -Y: only XCP packets; -g 300: a packet past slow start, the routers' feedback flowing
DISPLAY=$display XDG_CONFIG_HOME=$conf wireshark -X lua_script:"$here/tools/wireshark/xcp.lua" \
  -r "$pcap" -Y xcp -g 300 >/dev/null 2>&1 &
ws=$!
win=""
for _ in $(seq 60); do  # the main window, once the file is read
  win=$(DISPLAY=$display xdotool search --name "Wireshark" 2>/dev/null | tail -1) || true
  [ -n "$win" ] && break
  sleep 0.5
done
[ -n "$win" ] || { echo "$0: no Wireshark window appeared" >&2; exit 1; }
sleep 4
DISPLAY=$display xdotool windowfocus --sync "$win" 2>/dev/null || true
# the packet details pane's 4th row is the XCP shim: select it, expand its subtrees
x=${XCP_SHOT_X:-120}
y=${XCP_SHOT_SHIM_Y:-546}  # at this geometry and font; "?" leaves it collapsed
if [ "$y" != "?" ]; then
  DISPLAY=$display xdotool mousemove "$x" "$y" click 1
  sleep 0.5
  DISPLAY=$display xdotool key shift+Right
  sleep 1
fi
mkdir -p "$(dirname "$out")"
xwd -root -display "$display" | /usr/bin/convert xwd:- png:"$out"
echo "$out"
