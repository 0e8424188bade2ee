#!/bin/sh
# A cluster of namespace "machines" on this host, for trying the cluster commands
# (docs/cluster.md). Root; nothing leaves the namespaces it creates.
#
#   tools/cluster-ns.sh up [MACHINES]   3 by default; prints the cluster directory
#   tools/cluster-ns.sh down DIR        stops the agents and sshds it started, removes all
#
# Then, from the controller namespace (the only place the underlay is reachable):
#   ip netns exec xcl-<id>-ctl python3 -m orchestrator.cli cluster check DIR/inventory.yaml
set -eu
cd "$(dirname "$0")/.."
case "${1:-}" in
  up) exec python3 tests/cluster/nscluster.py up --machines "${2:-3}" ;;
  down) [ $# -eq 2 ] || { echo "usage: $0 down DIR" >&2; exit 2; }
        exec python3 tests/cluster/nscluster.py down "$2" ;;
  *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
