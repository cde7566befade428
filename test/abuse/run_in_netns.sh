#!/bin/sh
# File: run_in_netns.sh
# Layer: test (abuse). Runs an abuse test binary inside a private network namespace, so the
# hostile daemon requests and floods it sends over abstract Unix sockets reach no other
# process on the machine (abstract socket names are per network namespace) and nothing
# outside can answer them. Needs root or CAP_SYS_ADMIN (`unshare -n`); otherwise the test is
# reported as skipped (exit 77) with the reason, and the same cases still run on the host's
# namespace in the plain abuse_daemon_test.
# Usage: run_in_netns.sh <test binary> [args...]
set -u
bin="$1"
shift
if ! command -v unshare >/dev/null 2>&1; then
  echo "SKIPPED: no unshare(1) here; cannot create a private network namespace"
  exit 77
fi
if ! unshare -n true 2>/dev/null; then
  echo "SKIPPED: unshare -n refused (needs root or CAP_SYS_ADMIN); cannot create a private network namespace"
  exit 77
fi
# Inside: only the loopback device (/proc/net/dev lists the namespace of the reader).
exec unshare -n sh -c 'devs=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " ")
  test "$devs" = lo || { echo "not a private network namespace: $devs"; exit 1; }
  exec "$0" "$@"' "$bin" "$@"
