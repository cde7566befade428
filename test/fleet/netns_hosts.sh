# File: netns_hosts.sh (sourced by bash test scripts; not executable on its own)
# Layer: test helper for fleet tests that need several hosts on one machine (issue #28).
#
# Namespace mode (root or CAP_NET_ADMIN + CAP_SYS_ADMIN, the veth and bridge drivers):
#   netns_enter_hub re-runs the calling script in a fresh network namespace of its own, the
#   "hub": only its loopback and what the test adds exist there, so nothing the test creates
#   (bridge, addresses, ports) can collide with the machine's network or with another run of
#   the same test, and names need no per-run suffix. Each simulated host is a network + UTS
#   namespace (its own interfaces, routing, ports and host name) held by one `sleep` process,
#   joined to a bridge in the hub by a veth pair: host i is 10.77.0.(10+i)/24, the hub
#   10.77.0.1. Commands run on a host through nsenter (the equivalent of `ip netns exec` for a
#   namespace held by a process instead of a name under /run/netns).
#   Cleanup never depends on a trap having run: the re-run script is also the first process of
#   a new pid namespace (with its own /proc), so when it ends, however it ends (a ctest timeout
#   kills `unshare`, which kills it), the kernel kills every process the test started, and a
#   network namespace lives only as long as a process in it (a veth pair goes with its host's
#   namespace). The holders also exit on their own after NETNS_HOLD_SECS.
# Loopback mode (namespaces cannot be made here): host i is 127.0.0.i on the machine's own
#   network, host names other than host 1's come from a UTS namespace where one can be made.
#   The caller says loudly that the namespace form did not run (netns_reason) and exits 77
#   (ctest's SKIP_RETURN_CODE) after its checks pass, so the run shows as skipped, not passed.
#
# After netns_setup N: HOST_ADDR[i], HOST_NAME[i] (i = 1..N); on_host i CMD... runs CMD on
# host i (exec: the pid of `on_host i cmd &` is the command's); netns_host_down i takes host
# i's link down (its address stops answering: connections to it time out).

NETNS_MODE=loopback
NETNS_HOLD_SECS=${NETNS_HOLD_SECS:-180}
netns_reason=""
declare -a HOST_ADDR HOST_NAME HOST_HOLDER

# 0 when namespaces joined by veth links through a bridge can be made here (tried in a
# throwaway namespace); else 1 with the reason in netns_reason.
netns_probe() {
  local t
  for t in unshare nsenter ip; do
    command -v "$t" >/dev/null 2>&1 || { netns_reason="no $t command"; return 1; }
  done
  if ! netns_reason=$(unshare -n -u -p -m -f --mount-proc sh -c 'ip link add name kp0 type bridge &&
        ip link add name kp1 type veth peer name kp2 && ip link set kp1 master kp0' 2>&1); then
    netns_reason="cannot create a network namespace with a veth pair and a bridge (needs root or CAP_NET_ADMIN/CAP_SYS_ADMIN and the veth/bridge drivers): ${netns_reason:-unshare failed}"
    return 1
  fi
  return 0
}

# Re-runs "$@" (the calling script and its arguments) in a new network namespace, once; returns
# (loopback mode, netns_reason set) when that cannot be done. Inside the re-run, mode is netns.
netns_enter_hub() {
  if [ "${KAIROS_NETNS_HUB:-}" = 1 ]; then
    NETNS_MODE=netns
    return 0
  fi
  netns_probe || return 0
  KAIROS_NETNS_HUB=1 exec unshare -n -p -m -f --kill-child --mount-proc -- "$@"
}

# Makes hosts 1..N (names fleet-host1..N in namespace mode; in loopback mode host 1 keeps the
# machine's name). Returns 1 with a message when a namespace does not come up in time.
netns_setup() {
  local n=$1 i pid
  if [ "$NETNS_MODE" != netns ]; then
    for ((i = 1; i <= n; i++)); do
      HOST_ADDR[i]=127.0.0.$i
      if [ "$i" = 1 ] || ! unshare -u true 2>/dev/null; then HOST_NAME[i]=$(hostname)
      else HOST_NAME[i]=fleet-host$i; fi
    done
    return 0
  fi
  ip link set lo up && ip link add name kfbr type bridge && ip addr add 10.77.0.1/24 dev kfbr &&
    ip link set kfbr up || return 1
  for ((i = 1; i <= n; i++)); do
    HOST_ADDR[i]=10.77.0.$((10 + i))
    HOST_NAME[i]=fleet-host$i
    unshare -n -u -- sh -c "hostname ${HOST_NAME[i]} && ip link set lo up && exec sleep $NETNS_HOLD_SECS" &
    pid=$!
    HOST_HOLDER[i]=$pid
    # Up once the holder has exec'd sleep: its namespaces exist and its name is set.
    for _ in $(seq 200); do [ "$(cat /proc/$pid/comm 2>/dev/null)" = sleep ] && break; sleep 0.01; done
    [ "$(cat /proc/$pid/comm 2>/dev/null)" = sleep ] || { echo "FAIL: host $i's namespace did not come up"; return 1; }
    ip link add name vh$i type veth peer name eth0 netns "$pid" && ip link set vh$i master kfbr &&
      ip link set vh$i up &&
      nsenter -t "$pid" -n ip addr add "${HOST_ADDR[i]}/24" dev eth0 &&
      nsenter -t "$pid" -n ip link set eth0 up || { echo "FAIL: host $i's link"; return 1; }
  done
  return 0
}

# Runs CMD... on host i (replacing the shell: `on_host i cmd &` gives the command's pid).
on_host() {
  local i=$1
  shift
  if [ "$NETNS_MODE" = netns ]; then
    exec nsenter -t "${HOST_HOLDER[i]}" -n -u -- "$@"
  elif [ "${HOST_NAME[i]}" != "$(hostname)" ]; then
    exec unshare -u sh -c 'hostname "$0" && exec "$@"' "${HOST_NAME[i]}" "$@"
  else
    exec "$@"
  fi
}

# The command prefix that runs on host i, for scripts written by the test (a rank launcher).
on_host_prefix() {
  local i=$1
  if [ "$NETNS_MODE" = netns ]; then
    echo "nsenter -t ${HOST_HOLDER[i]} -n -u --"
  elif [ "${HOST_NAME[i]}" != "$(hostname)" ]; then
    echo "unshare -u sh -c 'hostname \"\$0\" && exec \"\$@\"' ${HOST_NAME[i]}"
  fi
}

# Host i goes down: its link is cut at the bridge, so its address stops answering (a
# connection to it gets no reply, as with a powered-off machine). Loopback mode: nothing
# listens on 127.0.0.i, so connections are refused.
netns_host_down() {
  [ "$NETNS_MODE" = netns ] && ip link set "vh$1" down
  return 0
}

netns_cleanup() {
  local p
  for p in "${HOST_HOLDER[@]}"; do kill "$p" 2>/dev/null; done
}
