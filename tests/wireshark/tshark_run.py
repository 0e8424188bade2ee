"""Running Debian's tshark with xcplab's dissector (tools/wireshark/xcp.lua), and writing
small captures for it: what the dissector tests share."""

from __future__ import annotations

import ipaddress
import shutil
import struct
import subprocess
from pathlib import Path

import dpkt

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tools" / "wireshark" / "xcp.lua"
TSHARK = shutil.which("tshark")


def ipv4(payload: bytes, src: str = "10.0.1.1", dst: str = "10.0.2.1", proto: int = 253,
         ttl: int = 64) -> bytes:
    """An IPv4 header (no options, checksum filled) followed by `payload`."""
    hdr = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, ttl,
                                proto, 0, ipaddress.IPv4Address(src).packed,
                                ipaddress.IPv4Address(dst).packed))
    s = sum(struct.unpack("!10H", bytes(hdr)))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    struct.pack_into("!H", hdr, 10, ~s & 0xFFFF)
    return bytes(hdr) + payload


def ethernet(ip: bytes) -> bytes:
    return bytes.fromhex("020000000002" "020000000001" "0800") + ip


def write_pcapng(path: Path, frames: list[bytes]) -> None:
    """Ethernet frames, one a millisecond, as pcapng (what captures in a run are)."""
    with open(path, "wb") as fh:
        w = dpkt.pcapng.Writer(fh, snaplen=65535, linktype=dpkt.pcap.DLT_EN10MB)
        for i, frame in enumerate(frames):
            w.writepkt(frame, ts=1_700_000_000 + i / 1000)


def tshark(*args: str) -> str:
    assert TSHARK, "tshark missing (Debian package tshark, tools/apt-packages.txt)"
    out = subprocess.run([TSHARK, "-X", f"lua_script:{PLUGIN}", "-n", *args],
                         capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0 or "Lua: Error" in out.stderr:
        raise AssertionError(f"tshark {' '.join(args)} failed ({out.returncode}):\n{out.stderr}")
    return out.stdout


def fields(capture: Path, names: list[str], display_filter: str | None = None,
           ) -> list[dict[str, str]]:
    """One dict per packet: field name -> value as tshark prints it ('' when absent;
    repeated occurrences joined by ',')."""
    args = ["-r", str(capture), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
            "-E", "aggregator=,"]
    if display_filter:
        args += ["-Y", display_filter]
    for n in names:
        args += ["-e", n]
    rows = []
    for line in tshark(*args).splitlines():
        cells = line.split("\t")
        rows.append(dict(zip(names, cells + [""] * (len(names) - len(cells)), strict=True)))
    return rows
