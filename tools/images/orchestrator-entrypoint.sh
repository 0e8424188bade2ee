#!/bin/sh
# Entrypoint of xcplab/orchestrator. Docker mounts /proc/sys read-only in
# unprivileged containers; the local worker sets per-namespace sysctls under
# /proc/sys/net, so with CAP_SYS_ADMIN (compose grants it) make it writable
# for this container's mount namespace only. Without the capability this is a
# no-op and runs that need sysctls report the error themselves.
mount -o remount,rw /proc/sys 2>/dev/null || true
exec "$@"
