#!/usr/bin/env bash
# Two ranks on one machine whose communication costs like a network (issue 10):
# network namespaces zc0 and zc1 joined by a veth pair, shaped on both ends,
# and a 2-rank Open MPI launcher that puts rank 0 in zc0 and rank 1 in zc1
# and lets them talk only TCP over that veth.
#
#   bench/netns.sh up [--rate 10gbit|none] [--delay 100us|0] [--mtu 1500]
#                     [--delay-impl auto|netem|nfqueue]
#   bench/netns.sh run [--bind-to core|none] -- CMD [ARGS...]   # CMD once per rank
#   bench/netns.sh check [--bytes N]     # proves the traffic goes over the shaped link
#   bench/netns.sh status                # the link, its qdiscs, the delay daemons
#   bench/netns.sh down                  # removes everything `up` made
#
# Needs root (CAP_NET_ADMIN; `ip netns exec` also needs CAP_SYS_ADMIN), iproute2
# (ip, tc), Open MPI (mpirun; mpicc for `check`), and for a delay on a kernel
# without sch_netem, iptables and a C compiler (see "Delay" below). `up` and
# `down` are idempotent: `up` again with other settings re-shapes the link.
#
# The link. One veth pair, named zcv at both ends (each end lives in its own
# namespace, so the names do not clash and one `btl_tcp_if_include zcv`
# serves both ranks), 10.77.0.1/24 in zc0 and 10.77.0.2/24 in zc1, MTU 1500
# (--mtu 9000 for jumbo frames). On each end's egress:
#   * rate: tbf, --rate in tc's units (10gbit, 400mbit), burst 128 KiB (two
#     64 KiB GSO packets; 105 us at 10 Gbit/s), a byte limit of
#     max(1 MiB, 2 ms at the rate). A full-duplex link: each direction has
#     the whole rate. A short queue on purpose, a switch port's few MB: a
#     deep one (64 MB was tried) holds each direction's ACKs behind up to
#     half a second of the other direction's data in a two-way exchange
#     (every all-gather and reduce-scatter of 2 ranks is one).
#   * delay: --delay one way per direction (100us: a round trip of 200 us
#     plus the stack's own), with netem as the parent of the tbf where the
#     kernel has sch_netem, otherwise with bench/netdelay.c (below).
# The veth itself is no wire: its "transmission" is a copy by the CPU, so an
# unshaped zcv moves 1-5 Gbit/s on a busy 2-core VM. Shaping only slows it;
# `check` reports what the link really does.
#
# Delay. sch_netem is the standard way; kernels built without it (as the
# 2-vCPU VM this was written on, 6.18.44-fc: CONFIG_NET_SCH_NETEM is not
# set and CONFIG_MODULES is off, so there is no module to load either, and
# no fq/etf/taprio qdisc that could hold packets to a timestamp, and no
# nft queue expression) get `--delay-impl nfqueue`: an
# iptables NFQUEUE rule on each namespace's INPUT from zcv hands every
# packet that arrives to bench/netdelay.c (compiled here with cc, run in
# that namespace, SCHED_FIFO), which accepts it --delay later; the kernel
# holds the packet meanwhile, then delivers it. The order is a wire's:
# the sender's tbf (serialization), then the delay (propagation), then the
# receiver; the sender's socket is not charged for packets "on the wire"
# (the receiver's ip_rcv drops the skb's socket reference before INPUT), so
# TCP small queues and autocorking see what they would see on a NIC.
# netem, on the sender's egress, holds them in the
# sender's qdisc (charged to its socket: harmless while tcp_limit_output_bytes,
# 4 MiB, exceeds rate x delay, 125 KB at 10 Gbit/s and 100 us). netdelay
# reports how late its releases are (`status`), and `check` measures the
# round trip end to end. The rule has no --queue-bypass: if a daemon dies,
# the link drops everything rather than silently losing its delay. `auto`
# (the default) takes netem when `tc` can add it, nfqueue otherwise.
#
# The launcher. `run` starts `mpirun` inside zc0 with a hostfile of two
# "hosts", 10.77.0.1 (zc0's own address: mpirun's node, rank 0) and
# 10.77.0.2 (rank 1), and `--mca plm_rsh_agent "netns.sh _rsh"`: Open MPI
# "logs in" to 10.77.0.2 through this script, which execs the orted daemon
# under `ip netns exec zc1`. Rank 1's orted and rank 1 thus live in zc1, each
# rank talks to its own node's daemon over its namespace's loopback (PMIx),
# and the daemons and the ranks reach each other over zcv only:
# `--mca oob_tcp_if_include zcv --mca pml ob1 --mca btl tcp,self
# --mca btl_tcp_if_include zcv`. No shared memory between the ranks: vader
# (sm) is not in the btl list, and Open MPI treats them as two nodes anyway.
# Why not a plain `mpirun -np 2 wrapper` whose wrapper does `ip netns exec
# zc$OMPI_COMM_WORLD_RANK`: the ranks then cannot reach their orted, whose
# PMIx server listens on the root namespace's loopback (MPI_Init fails with
# "OPAL ERROR: Unreachable"). The environment reaches rank 1 as it reaches
# rank 0 (the "rsh" is a local exec: everything is inherited, no -x needed).
# `--bind-to core` (default) pins rank r to core r with a rankfile (two
# nodes would otherwise each bind their rank to their core 0, the same
# core); `--bind-to none` leaves them unbound. The exit status is mpirun's.
set -euo pipefail

SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
STATE=${ZEROC_NETNS_STATE:-/run/zeroc-netns}
NS=(zc0 zc1)
ADDR=(10.77.0.1 10.77.0.2)
DEV=zcv
QUEUE=0           # NFQUEUE number, in each namespace
BURST=131072      # tbf burst, bytes

die() { echo "netns.sh: error: $*" >&2; exit 1; }
note() { echo "netns.sh: $*" >&2; }

need() {  # need CMD PACKAGE [WHY]
  command -v "$1" >/dev/null 2>&1 ||
    die "'$1' not found${3:+ ($3)}: apt-get install -y $2 (Debian; scripts/install-deps.sh does not install what only this bench needs)"
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (CAP_NET_ADMIN for namespaces and tc): sudo $0 $*"
  need ip iproute2
  need tc iproute2
}

ns_exists() { [ -e "/run/netns/$1" ]; }
is_up() { ns_exists "${NS[0]}" && ns_exists "${NS[1]}" && [ -f "$STATE/link" ]; }

# --- units ------------------------------------------------------------------

# rate_bps 10gbit -> 10000000000 (tc's decimal *bit units only; "none" -> 0)
rate_bps() {
  local r=${1,,}
  case $r in
    none|0) echo 0 ;;
    *tbit) awk -v v="${r%tbit}" 'BEGIN{printf "%.0f", v*1e12}' ;;
    *gbit) awk -v v="${r%gbit}" 'BEGIN{printf "%.0f", v*1e9}' ;;
    *mbit) awk -v v="${r%mbit}" 'BEGIN{printf "%.0f", v*1e6}' ;;
    *kbit) awk -v v="${r%kbit}" 'BEGIN{printf "%.0f", v*1e3}' ;;
    *bit) awk -v v="${r%bit}" 'BEGIN{printf "%.0f", v}' ;;
    *) return 1 ;;
  esac
}

# delay_us 100us -> 100, 2ms -> 2000, 0 -> 0
delay_us() {
  local d=${1,,}
  case $d in
    0|none) echo 0 ;;
    *us) awk -v v="${d%us}" 'BEGIN{printf "%.0f", v}' ;;
    *ms) awk -v v="${d%ms}" 'BEGIN{printf "%.0f", v*1e3}' ;;
    *s) awk -v v="${d%s}" 'BEGIN{printf "%.0f", v*1e6}' ;;
    *) return 1 ;;
  esac
}

num_ok() { [[ $1 =~ ^[0-9]+$ ]]; }

# --- netem detection ----------------------------------------------------------

# Why this kernel cannot add a netem qdisc, in one line.
netem_why() {
  local cfg="unknown (no /proc/config.gz)"
  if [ -r /proc/config.gz ]; then
    cfg=$(zcat /proc/config.gz 2>/dev/null | grep -E '^(# )?CONFIG_NET_SCH_NETEM[ =]' || true)
    cfg=${cfg:-"CONFIG_NET_SCH_NETEM absent"}
  fi
  local mods="loadable modules supported"
  if [ ! -e /proc/modules ]; then
    mods="no loadable modules (CONFIG_MODULES off): modprobe/kmod cannot help"
  elif ! command -v modprobe >/dev/null 2>&1; then
    mods="modules supported but no modprobe: apt-get install -y kmod, then modprobe sch_netem"
  elif [ ! -d "/lib/modules/$(uname -r)" ]; then
    mods="modules supported but /lib/modules/$(uname -r) is missing (no sch_netem.ko for this kernel)"
  fi
  echo "kernel $(uname -r): $cfg; $mods"
}

# Can this kernel add a netem qdisc? Tries once on zc0's zcv (up's first step
# replaces whatever it leaves).
have_netem() {
  [ -e /proc/modules ] && command -v modprobe >/dev/null 2>&1 && modprobe -q sch_netem 2>/dev/null
  tc -n "${NS[0]}" qdisc replace dev "$DEV" root netem delay 1us >/dev/null 2>&1 || return 1
  tc -n "${NS[0]}" qdisc del dev "$DEV" root >/dev/null 2>&1 || true
}

# --- the delay daemons -------------------------------------------------------

netdelay_bin() {
  need cc gcc "to build bench/netdelay.c, the delay for kernels without sch_netem"
  mkdir -p "$STATE"
  local bin=$STATE/netdelay
  if [ ! -x "$bin" ] || [ "$HERE/netdelay.c" -nt "$bin" ]; then
    cc -O2 -Wall -o "$bin.tmp" "$HERE/netdelay.c" || die "cannot build $HERE/netdelay.c"
    mv "$bin.tmp" "$bin"
  fi
  echo "$bin"
}

ipt() {  # ipt NS ARGS...: iptables in that namespace (legacy or nft backend)
  ip netns exec "$1" iptables -w "${@:2}"
}

stop_delay() {
  local i pid
  for i in 0 1; do
    if ns_exists "${NS[$i]}" && ip netns exec "${NS[$i]}" sh -c 'command -v iptables' >/dev/null 2>&1; then
      while ipt "${NS[$i]}" -D INPUT -i "$DEV" -j NFQUEUE --queue-num "$QUEUE" 2>/dev/null; do :; done
    fi
    if [ -f "$STATE/netdelay.$i.pid" ]; then
      pid=$(cat "$STATE/netdelay.$i.pid")
      # Only the process this script started: its pid file and its command line.
      if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "netdelay --queue $QUEUE"; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 50); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
        [ -e "/proc/$pid" ] && note "warning: netdelay $pid did not stop"
      fi
      rm -f "$STATE/netdelay.$i.pid"
    fi
  done
}

start_delay() {  # start_delay DELAY_US
  need iptables iptables "the NFQUEUE rule of the delay on kernels without sch_netem"
  local bin i pid
  bin=$(netdelay_bin)
  for i in 0 1; do
    rm -f "$STATE/netdelay.$i.stats"
    setsid ip netns exec "${NS[$i]}" "$bin" --queue "$QUEUE" --delay-us "$1" \
      --stats "$STATE/netdelay.$i.stats" </dev/null >"$STATE/netdelay.$i.log" 2>&1 &
    pid=$!
    echo "$pid" > "$STATE/netdelay.$i.pid"
    # Bound to its queue before any packet is queued to it.
    for _ in $(seq 50); do [ -f "$STATE/netdelay.$i.stats" ] && break; sleep 0.1; done
    if [ ! -f "$STATE/netdelay.$i.stats" ] || [ ! -e "/proc/$pid" ]; then
      die "netdelay did not start in ${NS[$i]}: $(cat "$STATE/netdelay.$i.log")"
    fi
    ipt "${NS[$i]}" -A INPUT -i "$DEV" -j NFQUEUE --queue-num "$QUEUE" ||
      die "iptables cannot add the NFQUEUE rule in ${NS[$i]} (CONFIG_NETFILTER_XT_TARGET_NFQUEUE?)"
  done
}

dump_delay_stats() {  # has the daemons rewrite their stats files now
  local i pid
  for i in 0 1; do
    if pid=$(cat "$STATE/netdelay.$i.pid" 2>/dev/null); then
      kill -USR1 "$pid" 2>/dev/null || true
    fi
  done
  sleep 0.2
}

delay_alive() {
  local i pid
  for i in 0 1; do
    pid=$(cat "$STATE/netdelay.$i.pid" 2>/dev/null) || return 1
    [ -e "/proc/$pid" ] || return 1
  done
}

# --- up / down ----------------------------------------------------------------

cmd_up() {
  local rate=10gbit delay=100us mtu=1500 impl=auto
  while [ $# -gt 0 ]; do
    case $1 in
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --delay) delay=${2:?--delay needs a value}; shift 2 ;;
      --mtu) mtu=${2:?--mtu needs a value}; shift 2 ;;
      --delay-impl) impl=${2:?--delay-impl needs a value}; shift 2 ;;
      *) die "up: unknown argument '$1' (see the header of $SELF)" ;;
    esac
  done
  local bps dus
  bps=$(rate_bps "$rate") || die "--rate '$rate': use tc's bit units (10gbit, 400mbit, 100kbit) or none"
  dus=$(delay_us "$delay") || die "--delay '$delay': use 100us, 2ms, 0"
  if ! num_ok "$mtu" || [ "$mtu" -lt 576 ] || [ "$mtu" -gt 65535 ]; then
    die "--mtu '$mtu': 576-65535"
  fi
  case $impl in auto|netem|nfqueue) ;; *) die "--delay-impl: auto, netem or nfqueue" ;; esac
  need_root up

  mkdir -p "$STATE"
  local i
  for i in 0 1; do
    if ! ns_exists "${NS[$i]}"; then
      ip netns add "${NS[$i]}" 2>"$STATE/err" ||
        die "ip netns add ${NS[$i]}: $(cat "$STATE/err") (needs CAP_SYS_ADMIN and CAP_NET_ADMIN, CONFIG_NET_NS)"
    fi
  done
  if ! ip -n "${NS[0]}" link show "$DEV" >/dev/null 2>&1 ||
     ! ip -n "${NS[1]}" link show "$DEV" >/dev/null 2>&1; then
    ip -n "${NS[0]}" link del "$DEV" 2>/dev/null || true
    ip -n "${NS[1]}" link del "$DEV" 2>/dev/null || true
    ip link add "$DEV" netns "${NS[0]}" type veth peer name "$DEV" netns "${NS[1]}" 2>"$STATE/err" ||
      die "cannot make the veth pair: $(cat "$STATE/err") (CONFIG_VETH?)"
  fi
  for i in 0 1; do
    ip -n "${NS[$i]}" link set lo up
    ip -n "${NS[$i]}" link set "$DEV" mtu "$mtu" up
    ip -n "${NS[$i]}" addr replace "${ADDR[$i]}/24" dev "$DEV"
  done

  # Shaping: start from a bare link.
  stop_delay
  for i in 0 1; do tc -n "${NS[$i]}" qdisc del dev "$DEV" root 2>/dev/null || true; done
  local how=none
  if [ "$dus" -gt 0 ]; then
    if [ "$impl" != nfqueue ] && have_netem; then
      how=netem
    elif [ "$impl" = netem ]; then
      die "--delay-impl netem: tc cannot add a netem qdisc: $(netem_why)"
    else
      how=nfqueue
      [ "$impl" = auto ] && note "no sch_netem ($(netem_why)); delay by bench/netdelay.c (NFQUEUE)"
    fi
  fi
  local limit=$((bps / 8 / 500)) tbf_parent=root
  [ "$limit" -lt 1048576 ] && limit=1048576
  for i in 0 1; do
    if [ "$how" = netem ]; then
      tc -n "${NS[$i]}" qdisc add dev "$DEV" root handle 1: netem delay "${dus}us" limit 100000
      tbf_parent="parent 1:1"
    fi
    if [ "$bps" -gt 0 ]; then
      # shellcheck disable=SC2086  # tbf_parent is "root" or "parent 1:1"
      tc -n "${NS[$i]}" qdisc add dev "$DEV" $tbf_parent handle 10: tbf rate "${bps}bit" \
        burst "$BURST" limit "$limit" 2>"$STATE/err" ||
        die "tc tbf on ${NS[$i]}: $(cat "$STATE/err") (CONFIG_NET_SCH_TBF?)"
    fi
  done
  [ "$how" = nfqueue ] && start_delay "$dus"

  local hosts=$STATE/hosts
  printf '%s slots=1\n%s slots=1\n' "${ADDR[0]}" "${ADDR[1]}" > "$hosts"
  local ncpu
  ncpu=$(nproc)
  printf 'rank 0=%s slot=0\nrank 1=%s slot=%d\n' "${ADDR[0]}" "${ADDR[1]}" $((1 % ncpu)) > "$STATE/rankfile"
  cat > "$STATE/link" <<EOF
rate=$rate
rate_bps=$bps
delay_us=$dus
delay_impl=$how
mtu=$mtu
tbf_limit=$limit
EOF
  note "up: ${NS[0]} (${ADDR[0]}) <-> ${NS[1]} (${ADDR[1]}) over $DEV, mtu $mtu, rate ${rate/none/unshaped}, delay ${dus} us one way ($how)"
}

cmd_down() {
  [ $# -eq 0 ] || die "down takes no arguments"
  need_root down
  stop_delay
  local n pids
  for n in "${NS[@]}"; do
    if ns_exists "$n"; then
      pids=$(ip netns pids "$n" 2>/dev/null | tr '\n' ' ')
      [ -n "$pids" ] && note "warning: processes still in $n: $pids(the namespace lives until they exit)"
      ip netns del "$n" || die "ip netns del $n failed"
    fi
  done
  rm -rf "$STATE"
  note "down: no zc0/zc1 namespaces, no shaping, no delay daemons"
}

# --- status -------------------------------------------------------------------

cmd_status() {
  need_root status
  if ! is_up; then
    echo "down (no ${NS[*]} namespaces or no $STATE/link)"
    return 1
  fi
  echo "up: $(tr '\n' ' ' < "$STATE/link")"
  [ -f "$STATE/netdelay.0.pid" ] && dump_delay_stats
  local i
  for i in 0 1; do
    echo "${NS[$i]} (${ADDR[$i]}):"
    tc -n "${NS[$i]}" -s qdisc show dev "$DEV" | sed 's/^/  /'
    if [ -f "$STATE/netdelay.$i.pid" ]; then
      local pid alive=dead
      pid=$(cat "$STATE/netdelay.$i.pid")
      [ -e "/proc/$pid" ] && alive=alive
      echo "  netdelay pid $pid ($alive): $(tr '\n' ' ' < "$STATE/netdelay.$i.stats" 2>/dev/null)"
    fi
  done
}

# --- run ----------------------------------------------------------------------

cmd_run() {
  local bind=core
  while [ $# -gt 0 ]; do
    case $1 in
      --bind-to) bind=${2:?}; shift 2 ;;
      --) shift; break ;;
      *) die "run: unknown argument '$1'; usage: $0 run [--bind-to core|none] -- CMD [ARGS...]" ;;
    esac
  done
  [ $# -gt 0 ] || die "run: no command; usage: $0 run [--bind-to core|none] -- CMD [ARGS...]"
  case $bind in core|none) ;; *) die "--bind-to: core or none" ;; esac
  need_root run
  need mpirun openmpi-bin
  is_up || die "the namespaces are not up: $0 up [--rate 10gbit --delay 100us]"
  # shellcheck source=/dev/null
  . "$STATE/link"
  if [ "$delay_impl" = nfqueue ] && ! delay_alive; then
    die "a netdelay daemon is dead (see $STATE/netdelay.*.log): the link drops every packet; run '$0 up' again"
  fi
  [[ $SELF != *[[:space:]:]* ]] ||
    die "the path $SELF has a space or a colon: Open MPI cannot take it as its rsh agent"
  local placement=(--bind-to none)
  [ "$bind" = core ] && placement=(--rankfile "$STATE/rankfile")
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  exec ip netns exec "${NS[0]}" mpirun -np 2 --hostfile "$STATE/hosts" "${placement[@]}" \
    --mca plm_rsh_agent "$SELF _rsh" \
    --mca oob_tcp_if_include "$DEV" \
    --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$DEV" \
    "$@"
}

# Open MPI's rsh agent: `netns.sh _rsh [OPTIONS] HOST COMMAND...` runs the
# remote shell command (the orted launch line, to be parsed by a shell) in
# the namespace that owns HOST.
cmd_rsh() {
  while [ $# -gt 0 ] && [[ $1 == -* ]]; do shift; done
  [ $# -ge 2 ] || die "_rsh: usage: _rsh HOST COMMAND..."
  local host=$1 ns="" i
  shift
  for i in 0 1; do [ "$host" = "${ADDR[$i]}" ] && ns=${NS[$i]}; done
  [ -n "$ns" ] || die "_rsh: unknown host '$host' (known: ${ADDR[*]})"
  # NETNS_RSH_ENV=bare: as ssh does, the remote command starts from a bare
  # environment, not the launcher's, so what reaches the remote ranks is
  # what mpirun exports (test/e2e/launch_netns.sh). Unset, it inherits it
  # (the benches' peers rely on that).
  if [ "${NETNS_RSH_ENV:-}" = bare ]; then
    exec env -i PATH="$PATH" HOME="${HOME:-/}" ip netns exec "$ns" /bin/sh -c "$*"
  fi
  exec ip netns exec "$ns" /bin/sh -c "$*"
}

tx_bytes() {  # bytes sent so far by zcv in namespace $1's index
  ip netns exec "${NS[$1]}" cat "/sys/class/net/$DEV/statistics/tx_bytes"
}

# --- check --------------------------------------------------------------------

cmd_check() {
  local bytes=""
  while [ $# -gt 0 ]; do
    case $1 in
      --bytes) bytes=${2:?}; shift 2 ;;
      *) die "check: unknown argument '$1'" ;;
    esac
  done
  need_root check
  need mpicc libopenmpi-dev "to build bench/netprobe.c"
  is_up || die "the namespaces are not up: $0 up [--rate 10gbit --delay 100us]"
  # shellcheck source=/dev/null
  . "$STATE/link"
  if [ -z "$bytes" ]; then
    # ~0.1 s at the link's rate, 1-100 MB.
    bytes=100000000
    if [ "$rate_bps" -gt 0 ]; then
      bytes=$((rate_bps / 80))
      [ "$bytes" -gt 100000000 ] && bytes=100000000
      [ "$bytes" -lt 1000000 ] && bytes=1000000
    fi
  fi
  num_ok "$bytes" || die "--bytes: a number of bytes"
  local bin=$STATE/netprobe
  if [ ! -x "$bin" ] || [ "$HERE/netprobe.c" -nt "$bin" ]; then
    mpicc -O2 -o "$bin.tmp" "$HERE/netprobe.c" || die "cannot build $HERE/netprobe.c"
    mv "$bin.tmp" "$bin"
  fi
  local out tx0 tx1
  tx0=$(tx_bytes 0) tx1=$(tx_bytes 1)
  out=$("$SELF" run -- "$bin" "$bytes") || die "the probe failed: $out"
  tx0=$(( $(tx_bytes 0) - tx0 )) tx1=$(( $(tx_bytes 1) - tx1 ))
  echo "$out"
  # rtt_us R / oneway_s S / allreduce_s S lines from netprobe
  local rtt oneway allred
  rtt=$(awk '$1=="rtt_us"{print $2}' <<<"$out")
  oneway=$(awk '$1=="oneway_s"{print $2}' <<<"$out")
  allred=$(awk '$1=="allreduce_s"{print $2}' <<<"$out")
  if [ -z "$rtt" ] || [ -z "$oneway" ] || [ -z "$allred" ]; then
    die "cannot read the probe's output"
  fi
  awk -v rtt="$rtt" -v ow="$oneway" -v ar="$allred" -v n="$bytes" -v bps="$rate_bps" \
      -v dus="$delay_us" -v impl="$delay_impl" -v tx0="$tx0" -v tx1="$tx1" '
    BEGIN {
      bad = 0
      printf "link: rate %s, delay %d us one way (%s)\n", bps ? sprintf("%.3g Gbit/s", bps/1e9) : "unshaped", dus, impl
      # Rank 0 sent the one-way message twice and its part of 2 all-reduces
      # (each rank must receive N bytes of an N-byte all-reduce of 2 ranks):
      # >= 4N out of zc0, >= 2N out of zc1, if it all went over zcv.
      printf "zcv sent %.1f MB from zc0 (>= %.1f MB expected), %.1f MB from zc1 (>= %.1f MB)", tx0/1e6, 4*n/1e6, tx1/1e6, 2*n/1e6
      if (tx0 < 4 * n || tx1 < 2 * n) { printf ": MISSING, shared memory or another path?\n"; bad = 1 }
      else printf ": ok\n"
      if (dus > 0) {
        need = 2 * dus
        printf "round trip %.0f us: %s 2 x delay = %d us\n", rtt, (rtt >= 0.9 * need ? ">=" : "BELOW"), need
        if (rtt < 0.9 * need) bad = 1
      }
      printf "one way %d B: %.1f ms = %.2f Gbit/s", n, ow * 1e3, n * 8 / ow / 1e9
      if (bps > 0) {
        t = n * 8 / bps
        printf " (the link allows %.2f Gbit/s, >= %.1f ms: %s)", bps/1e9, t * 1e3, (ow >= 0.9 * t ? "ok" : "FASTER THAN THE LINK")
        if (ow < 0.9 * t) bad = 1
        if (n * 8 / ow < 0.5 * bps)
          printf "\n  note: under half the rate: the CPU (the veth copy, TCP) or the delay (window) limits this link, not tbf"
      }
      printf "\nall-reduce %d B: %.1f ms", n, ar * 1e3
      if (bps > 0) {
        t = n * 8 / bps   # each rank must receive N bytes
        printf " (>= %.1f ms at the rate: %s)", t * 1e3, (ar >= 0.9 * t ? "ok" : "FASTER THAN THE LINK")
        if (ar < 0.9 * t) bad = 1
      }
      printf "\n"
      if (bad) { print "FAIL: the traffic is not going through the shaped link"; exit 1 }
      print "ok: the ranks talk over the shaped link"
    }'
  if [ "$delay_impl" = nfqueue ]; then
    local i
    dump_delay_stats
    for i in 0 1; do
      echo "netdelay ${NS[$i]}: $(grep -E '^(packets|late_mean_us|late_max_us|enobufs|ring_full) ' "$STATE/netdelay.$i.stats" | tr '\n' ' ')"
    done
  fi
}

# ------------------------------------------------------------------------------

[ $# -gt 0 ] || die "usage: $0 up|down|run|check|status (see the header of $SELF)"
sub=$1
shift
case $sub in
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  run) cmd_run "$@" ;;
  check) cmd_check "$@" ;;
  status) cmd_status "$@" ;;
  _rsh) cmd_rsh "$@" ;;
  -h|--help|help) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//' ;;
  *) die "unknown command '$sub': up, down, run, check or status" ;;
esac
