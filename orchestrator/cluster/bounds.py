"""Bounds on an inventory: every value that sizes work (SSH sessions, pings, Ansible
forks) or memory has one, so a typo cannot start a thousand SSH sessions."""

from __future__ import annotations

MAX_INVENTORY_BYTES = 256 * 1024
MAX_MACHINES = 64           # pairwise MTU probes grow as n^2: 64 machines = 4032 pings
MAX_ROLES = 8               # role tags per machine
MAX_CORES = 1024
MIN_MTU = 576               # the smallest IPv4 datagram every link must carry (RFC 791)
MAX_MTU = 9216              # the largest jumbo frame common NICs accept
MIN_NIC_BPS = 10**6
MAX_NIC_BPS = 800 * 10**9
MAX_PATH_CHARS = 4096
# Concurrent SSH sessions / Ansible forks: the controller is one small machine.
MAX_PARALLEL = 16
