#!/usr/bin/env bash
# Emulate a cluster of N hosts on this one machine (root only), so that mpirun launches across
# "nodes" without ssh and Open MPI's TCP transport crosses a real (optionally shaped) link:
# a switch network namespace with a bridge, N host namespaces (network + their own hostname),
# each joined to the bridge by a veth pair, addresses 10.231.0.K/24 (hostK); the root namespace
# gets no interface on that network. State lives in /run/PREFIX/ (hostfile, hosts, agent).
#
#   scripts/emulate-cluster.sh up N [--link RATE] [--delay MS] [--loss PCT] [--host-link HOST=RATE]...
#                                   [--slots K] [--prefix NAME]
#   scripts/emulate-cluster.sh exec HOST [--prefix NAME] -- COMMAND...
#   scripts/emulate-cluster.sh mpirun [--prefix NAME] [MPIRUN-ARGS...]
#   scripts/emulate-cluster.sh status [--prefix NAME]
#   scripts/emulate-cluster.sh throttle HOST PCT|off [--prefix NAME]
#   scripts/emulate-cluster.sh cut HOST [--prefix NAME]
#   scripts/emulate-cluster.sh down [--prefix NAME]
#
# RATE: as tc writes it (100mbit, 10gbit), both directions of every host link (htb, with the
# link's segments at most 8 KiB: htb passes a whole 64 KiB GSO segment at once while it has
# tokens, so a 1gbit link moved the 16 KiB calls of a 2 x 2 tree allreduce at 0.179 GB/s busbw,
# over its 0.125; the burst is 250 us of the link); --host-link host2=100mbit overrides one host. Every
# link carries jumbo frames (MTU 9000), as cluster networks do. --delay MS / --loss PCT: netem on each host's
# egress (one way host to host = MS); they need sch_netem in the kernel: without it `up` fails
# with exit 77 when they are asked for and says so in one line otherwise. --slots: the hostfile's
# slots per host (default 2). mpirun runs in host1 with the hostfile, this cluster's agent as
# plm_rsh_agent, TCP (ob1, btl self,vader,tcp) on 10.231.0.0/24 only, --bind-to none, and idle
# ranks yielding when the slots outnumber the cores, TCP keepalives on the launcher's daemons
# (a dead host noticed in ~5 s), Open MPI's TCP transport without its emulated RDMA put (btl_tcp_flags
# without `put`: with it a pair exchanging large messages both ways at once moves one direction at
# a time, osu_bibw 83-104 MB/s at 1gbit against 216-229 without it, osu_bw 116 either way), all as OMPI_MCA_* variables, so that
# mpirun arguments override them; `--prefix` goes right after `mpirun`. throttle: the host's
# processes, those running and those started later, get PCT% of one CPU (a cpu cgroup quota, v1 or
# v2); `off` lifts it. cut: deletes the host's link (a host gone from the network mid-run). down kills what still runs in
# the hosts and removes everything; it is idempotent and cleans a crashed or partial `up`.
# Exit: 0 ok, 1 failure, 2 bad usage, 77 cannot emulate here (not root, no ip netns / nsenter /
# unshare, namespaces cannot be made, or --delay/--loss without sch_netem). Docs: docs/suite.md.
set -euo pipefail

# --help: this file's opening comment, up to the first line of code, without the '# '.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }

me=$(basename "$0")
net=10.231.0
die() { echo "$me: $*" >&2; exit 2; }
fail() { echo "$me: $*" >&2; exit 1; }
skip() { echo "$me: cannot emulate a cluster here: $*" >&2; exit 77; }

# Options before the command (--prefix x up 2) are taken as after it.
early=()
while [ $# -gt 0 ] && [ "$1" = --prefix ]; do
  [ $# -ge 2 ] || die "--prefix needs a name"
  early+=("$1" "$2"); shift 2
done
cmd=${1:-}
[ $# -eq 0 ] || shift
case "$cmd" in
  -h|--help) usage; exit 0 ;;
  up|exec|mpirun|status|down|throttle|cut) ;;
  '') die "missing command: up, exec, mpirun, status, throttle, cut or down (see --help)" ;;
  *) die "unknown command '$cmd' (see --help)" ;;
esac

prefix=commscope-cluster
n="" link="" delay="" loss="" slots=2 host="" pct=""
declare -A host_link=()
rest=()
if [ "$cmd" = exec ] || [ "$cmd" = throttle ] || [ "$cmd" = cut ]; then
  [ $# -ge 1 ] && [ "${1#-}" = "$1" ] || die "$cmd needs a host (see --help)"
  host=host${1#host}; shift
fi
if [ "$cmd" = throttle ]; then
  [ $# -ge 1 ] && [[ $1 =~ ^([1-9][0-9]{0,3}|off)$ ]] || die "throttle needs a percentage of one CPU (1-9999) or off"
  pct=$1; shift
fi
set -- "${early[@]}" "$@"
while [ $# -gt 0 ]; do
  case "$cmd:$1" in
    *:--prefix) [ $# -ge 2 ] || die "--prefix needs a name"; prefix=$2; shift 2 ;;
    mpirun:*) rest=("$@"); break ;;
    exec:--) shift; rest=("$@"); break ;;
    up:--link) [ $# -ge 2 ] || die "--link needs a rate (e.g. 1gbit)"; link=$2; shift 2 ;;
    up:--delay) [ $# -ge 2 ] || die "--delay needs milliseconds"; delay=$2; shift 2 ;;
    up:--loss) [ $# -ge 2 ] || die "--loss needs a percentage"; loss=$2; shift 2 ;;
    up:--slots) [ $# -ge 2 ] || die "--slots needs a count"; slots=$2; shift 2 ;;
    up:--host-link) [ $# -ge 2 ] && [[ $2 == *=* ]] || die "--host-link needs HOST=RATE"
      h=${2%%=*}; h=host${h#host}; host_link[$h]=${2#*=}; shift 2 ;;
    up:[0-9]*) [ -z "$n" ] || die "up takes one host count"; n=$1; shift ;;
    *:-h|*:--help) usage; exit 0 ;;
    *) die "$cmd: unexpected argument '$1' (see --help)" ;;
  esac
done
[[ $prefix =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$ ]] || die "--prefix: letters, digits, _ . - only (at most 32)"
rate_re='^[0-9]+(\.[0-9]+)?([kKmMgGtT]i?)?(bit|bps)$'
if [ "$cmd" = up ]; then
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 250 ] || die "up needs a host count from 1 to 250"
  [[ $slots =~ ^[0-9]+$ ]] && [ "$slots" -ge 1 ] || die "--slots needs a positive integer"
  [ -z "$link" ] || [[ $link =~ $rate_re ]] || die "--link: a tc rate like 100mbit or 10gbit, not '$link'"
  [ -z "$delay" ] || [[ $delay =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--delay: milliseconds (e.g. 0.05 or 2), not '$delay'"
  [ -z "$loss" ] || [[ $loss =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--loss: a percentage (e.g. 0.1), not '$loss'"
  for h in "${!host_link[@]}"; do
    [[ $h =~ ^host[0-9]+$ ]] && [ "${h#host}" -ge 1 ] && [ "${h#host}" -le "$n" ] || die "--host-link: no host '$h' in a cluster of $n"
    [[ ${host_link[$h]} =~ $rate_re ]] || die "--host-link $h: a tc rate like 100mbit, not '${host_link[$h]}'"
  done
fi
[ "$cmd" != exec ] || [ ${#rest[@]} -gt 0 ] || die "exec needs a command after -- (exec HOST -- COMMAND...)"

# Everything below changes namespaces: say plainly why not, with the status a ctest fixture skips on.
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, bind mounts)"
for tool in ip tc nsenter unshare mount; do command -v "$tool" >/dev/null || skip "'$tool' is missing"; done
ip netns list >/dev/null 2>&1 || skip "'ip netns' does not work"

run=/run/$prefix
sw=$prefix-switch
hostns() { echo "$prefix-$1"; }
# The namespaces and mounts this prefix owns, found from the system rather than from our state
# files, so that down also cleans after an `up` that died before writing them.
our_netns() { ip netns list | awk '{print $1}' | grep -E "^$(sed 's/[.]/\\./g' <<<"$prefix")-(switch|host[0-9]+)$" || true; }
our_mounts() { awk -v d="$run/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r; }
hosts_up() { our_netns | sed -n "s/^.*-\(host[0-9]*\)$/\1/p" | sort -V; }
# The cpu cgroup folder of every host (throttle), v2 or v1; empty when there is no cpu controller.
cg_root() {
  if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then echo /sys/fs/cgroup
  elif [ -d /sys/fs/cgroup/cpu ]; then echo /sys/fs/cgroup/cpu; fi
}
cg_of() { local r; r=$(cg_root); [ -z "$r" ] || echo "$r/$prefix-$1"; }

do_down() {
  local ns pids m
  # Processes left in a host (orted, ranks) would keep its namespaces alive: end them.
  pids=$(for ns in $(our_netns); do ip netns pids "$ns" 2>/dev/null; done)
  if [ -n "$pids" ]; then
    echo "$me: ending $(wc -w <<<"$pids") process(es) still in the hosts"
    kill -TERM $pids 2>/dev/null || true
    sleep 0.5
    kill -KILL $pids 2>/dev/null || true
  fi
  for ns in $(our_netns); do ip netns del "$ns"; done
  local cg r; r=$(cg_root)
  if [ -n "$r" ]; then for cg in "$r/$prefix"-host*; do [ ! -d "$cg" ] || rmdir "$cg" 2>/dev/null || true; done; fi
  # umount -n: do not create /run/mount/utab (libmount) on the way out
  for m in $(our_mounts); do umount -n "$m" 2>/dev/null || umount -n -l "$m"; done
  rm -rf "$run"
}

# Enter HOST: its network and UTS namespaces, plus a private mount namespace in which our
# hosts file covers /etc/hosts (the emulated names resolve there and only there) and, as
# `ip netns exec` does, a fresh sysfs shows the host's own interfaces in /sys/class/net.
mounts='mount -n --bind "$0" /etc/hosts && { mount -n -t sysfs sysfs /sys 2>/dev/null || true; }'
enter() {
  local h=$1; shift
  [ -e "/run/netns/$(hostns "$h")" ] && [ -e "$run/uts/$h" ] || fail "no host '$h' in cluster '$prefix' (see status)"
  local cg; cg=$(cg_of "$h")
  [ -z "$cg" ] || [ ! -d "$cg" ] || echo $$ >"$cg/cgroup.procs"
  exec nsenter --net="/run/netns/$(hostns "$h")" --uts="$run/uts/$h" -- \
    unshare --mount --propagation private -- sh -c "$mounts"' && exec "$@"' "$run/hosts" "$@"
}

netem_ok() {  # sch_netem is not in every kernel (no module, or not built): probe in the switch
  tc -n "$sw" qdisc add dev lo root netem delay 0ms 2>/dev/null && tc -n "$sw" qdisc del dev lo root
}

# Shape DEV in namespace NS: htb for the rate, netem under it for delay/loss. Rate only: both
# link ends; netem only on the host end (host egress). A shaped device sends segments of at most
# 8 KiB (gso_max_size): htb lets a packet through while it has tokens and pays the debt after, so
# a 64 KiB GSO segment crossed at the veth's speed (2 hosts x 2 ranks at 1gbit, the quick suite's
# rows from 8 KiB: 48-56 of 280 above the model, 9-10 far below, mean |log of_expected| 0.29-0.32
# in three runs; segments of 8 KiB: 23-30 above, 1 far below, 0.21 in two; of the MTU, 1500 B: 12
# above but 100 below, 0.32, each packet's cost on two cores).
# The burst is 250 us of the link (at least two jumbo frames; 31 KB at 1gbit), not tc's default
# of one packet: htb sends again only when the kernel's timer wakes it, and tokens beyond the
# burst are lost, so a wake-up later than the burst lasts holds the link below its rate. On a
# 2-core VM whose timers fire 29-31 us late (median; 61-67 us at the 99th percentile), at 1gbit
# with tc's burst and MTU 1500: the bench's osu_bw 100-107 MB/s, osu_bibw 197-199, the 16 MiB
# allreduces of cluster.bench.verdict_good at 0.50-0.67 of the link's model; with jumbo frames
# and this burst: 122 MB/s, 241-243, 0.84-0.92 (a TCP stream with jumbo frames: 82 MB/s with
# tc's burst, 114 with 16 KiB, 120 with 64 KiB). What a burst costs: a message that fits it
# crosses an idle link at the veth's speed (docs/suite.md, "Shaping").
burst_of() {  # htb burst in bytes for a tc rate (RATE as rate_re allows)
  awk -v r="$1" 'BEGIN {
    match(r, /^[0-9]+(\.[0-9]+)?/); n = substr(r, 1, RLENGTH) + 0; u = tolower(substr(r, RLENGTH + 1)); m = 1
    if (u ~ /^k/) m = 1e3; else if (u ~ /^m/) m = 1e6; else if (u ~ /^g/) m = 1e9; else if (u ~ /^t/) m = 1e12
    if (u ~ /^.i/) m = m == 1e3 ? 1024 : m == 1e6 ? 1048576 : m == 1e9 ? 1073741824 : 1099511627776
    bytes = n * m / (u ~ /bit$/ ? 8 : 1); b = int(bytes * 250e-6)
    print (b > 18000 ? b : 18000) }'
}
shape() {
  local ns=$1 dev=$2 rate=$3 em=$4 parent=root burst
  if [ -n "$rate" ]; then
    burst=$(burst_of "$rate")
    ip -n "$ns" link set dev "$dev" gso_max_size 8192 2>/dev/null ||
      echo "$me: note: cannot limit $dev's segments to 8 KiB (gso_max_size): messages up to 64 KiB may cross the shaped link faster than its rate" >&2
    tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 1
    tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" burst "$burst" cburst "$burst" quantum 60000  # one class: its quantum only silences a warning
    parent="parent 1:1"
  fi
  [ -z "$em" ] || tc -n "$ns" qdisc add dev "$dev" $parent handle 10: netem $em
}

do_up() {
  [ -z "$(our_netns)" ] && [ ! -e "$run" ] || fail "cluster '$prefix' is already up (or half made): run '$me down --prefix $prefix' first"
  trap 'echo "$me: up failed, removing what it made" >&2; do_down' EXIT
  mkdir -p "$run/uts"
  ip netns add "$sw" 2>/dev/null || { trap - EXIT; do_down; skip "'ip netns add' fails (no CAP_SYS_ADMIN, or no network namespaces)"; }
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  local em="" have_netem=1 i h ns
  netem_ok || have_netem=0
  [ -z "$delay" ] || em="delay ${delay}ms"
  [ -z "$loss" ] || em="$em loss ${loss}%"
  if [ $have_netem = 0 ]; then
    if [ -n "$em" ]; then trap - EXIT; do_down; skip "no sch_netem in this kernel: --delay/--loss cannot be applied"; fi
    echo "$me: no sch_netem in this kernel: rate shaping only, no delay/loss"
  fi
  printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$run/hosts"
  : >"$run/hostfile"
  for ((i = 1; i <= n; i++)); do
    h=host$i ns=$(hostns $h)
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # A peer gone from the network fails a connection with data in flight after ~6 s of
    # retransmissions (tcp_retries2 4) rather than Linux's ~15 min: a cut host ends the job
    # even when the launcher's last messages to it wait unacknowledged.
    nsenter --net="/run/netns/$ns" sysctl -qw net.ipv4.tcp_retries2=4 2>/dev/null ||
      echo "$me: cannot set tcp_retries2 in $h: a cut host may hang the launcher for minutes"
    # A UTS namespace of its own, kept alive by a bind mount: the host's hostname is what Open MPI
    # names the node by, and its session and shared-memory file names differ per host.
    touch "$run/uts/$h"
    unshare --uts="$run/uts/$h" hostname "$h"
    # The pair is made in the switch with its host end moved straight into the host: neither
    # end ever exists in the root namespace.
    # Jumbo frames on every link, shaped or not (a bridge drops a frame larger than the port's
    # MTU): a sixth of the packets, whose cost on a small machine's cores held a 1gbit link below
    # its rate (above).
    ip -n "$sw" link add "v$h" mtu 9000 type veth peer name eth0 mtu 9000 netns "$ns"
    ip -n "$sw" link set "v$h" master br0 up
    ip -n "$ns" addr add "$net.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    shape "$ns" eth0 "${host_link[$h]:-$link}" "$em"
    shape "$sw" "v$h" "${host_link[$h]:-$link}" ""
    echo "$net.$i $h" >>"$run/hosts"
    echo "$h slots=$slots" >>"$run/hostfile"
  done
  mkdir -p "$run/cgfs"
  local cg_fs="cgroup -o cpu none"
  [ "$(cg_root)" != /sys/fs/cgroup ] || cg_fs="cgroup2 none"
  # Open MPI's plm_rsh_agent is called like ssh: AGENT [ssh options] HOST COMMAND-WORDS...
  # The words are joined and run by sh, as ssh's remote shell would.
  cat >"$run/agent" <<EOF
#!/bin/sh
# plm_rsh_agent of emulated cluster '$prefix' (written by $me): runs a command on a host.
while [ \$# -gt 0 ]; do case \$1 in -[lpoiFJ]) shift 2 ;; -*) shift ;; *) break ;; esac; done
h=\$(awk -v h="\$1" '\$1 == h || \$2 == h {print \$2; exit}' "$run/hosts"); shift
[ -n "\$h" ] && [ -e "/run/netns/$prefix-\$h" ] || { echo "agent: no such emulated host" >&2; exit 255; }
# A throttled host's cgroup: mpirun runs in host1, whose /sys is its own sysfs, so the cpu
# hierarchy is mounted once more (in host1's private mount namespace only) to reach it.
if [ -e "$run/throttled-\$h" ]; then
  mountpoint -q "$run/cgfs" || mount -n -t $cg_fs "$run/cgfs" 2>/dev/null
  echo \$\$ >"$run/cgfs/$prefix-\$h/cgroup.procs" || echo "agent: cannot throttle \$h" >&2
fi
exec nsenter --net="/run/netns/$prefix-\$h" --uts="$run/uts/\$h" -- unshare --mount --propagation private -- \\
  sh -c '$mounts && exec sh -c "\$1"' "$run/hosts" "\$*"
EOF
  chmod 755 "$run/agent"
  trap - EXIT
  echo "$me: $n hosts up (prefix $prefix, $net.1-$n, slots $slots); hostfile $run/hostfile"
}

do_status() {
  local hs h ns em
  hs=$(hosts_up)
  if [ -z "$(our_netns)" ] && [ ! -e "$run" ]; then echo "cluster '$prefix': not up"; return 0; fi
  echo "cluster '$prefix': $(wc -w <<<"$hs") hosts, state in $run$([ -x "$run/agent" ] || echo ', INCOMPLETE (an up that died): run down')"
  [ ! -e "/run/netns/$sw" ] || netem_ok || echo "  no sch_netem in this kernel: no delay/loss"
  for h in $hs; do
    ns=$(hostns "$h")
    em=$(tc -n "$ns" qdisc show dev eth0 | sed -n 's/^qdisc netem .*limit [0-9]* */, netem /p')
    printf '  %-7s hostname %-7s %-14s %3s procs  rate out %s in %s%s\n' "$h" \
      "$(nsenter --uts="$run/uts/$h" hostname 2>/dev/null || echo '?')" \
      "$(ip -n "$ns" -4 -o addr show dev eth0 | awk '{print $4}')" "$(ip netns pids "$ns" | wc -l)" \
      "$(tc -n "$ns" class show dev eth0 | sed -n 's/.* rate \([^ ]*\).*/\1/p' | grep . || echo unshaped)" \
      "$(tc -n "$sw" class show dev "v$h" 2>/dev/null | sed -n 's/.* rate \([^ ]*\).*/\1/p' | grep . || echo unshaped)" \
      "$em$(ip -n "$sw" link show "v$h" >/dev/null 2>&1 || echo ', CUT off the network')$([ ! -d "$(cg_of "$h")" ] || echo ', cpu throttled')"
  done
}

do_throttle() {
  local ns cg r pid
  ns=$(hostns "$host")
  [ -e "/run/netns/$ns" ] || fail "no host '$host' in cluster '$prefix' (see status)"
  r=$(cg_root)
  [ -n "$r" ] || skip "no cpu cgroup controller (/sys/fs/cgroup): cannot throttle a host"
  cg=$r/$prefix-$host
  if [ "$pct" = off ]; then
    [ -d "$cg" ] || { echo "$me: $host is not throttled"; return 0; }
    for pid in $(cat "$cg/cgroup.procs"); do echo "$pid" >"$r/cgroup.procs" 2>/dev/null || true; done
    rmdir "$cg"
    rm -f "$run/throttled-$host"
    echo "$me: $host no longer throttled"
    return 0
  fi
  mkdir -p "$cg" || skip "cannot make cgroup $cg"
  if [ -e "$cg/cpu.max" ]; then
    echo "$((pct * 1000)) 100000" >"$cg/cpu.max"
  else
    echo 100000 >"$cg/cpu.cfs_period_us" && echo "$((pct * 1000))" >"$cg/cpu.cfs_quota_us"
  fi || fail "cannot set the CPU quota of $cg"
  touch "$run/throttled-$host"
  for pid in $(ip netns pids "$ns"); do echo "$pid" >"$cg/cgroup.procs" 2>/dev/null || true; done
  echo "$me: $host throttled to $pct% of one CPU ($cg)"
}

case "$cmd" in
  up) do_up ;;
  throttle) do_throttle ;;
  cut)
    [ -e "/run/netns/$(hostns "$host")" ] || fail "no host '$host' in cluster '$prefix' (see status)"
    ip -n "$sw" link del "v$host" 2>/dev/null || fail "$host has no link left to cut"
    echo "$me: $host cut off the network (its link deleted)" ;;
  down) if [ -z "$(our_netns)" ] && [ ! -e "$run" ]; then echo "$me: cluster '$prefix' is not up"; else do_down; echo "$me: cluster '$prefix' removed"; fi ;;
  status) do_status ;;
  exec) enter "$host" "${rest[@]}" ;;
  mpirun)
    [ -x "$run/agent" ] || fail "cluster '$prefix' is not up (run '$me up N' first)"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      OMPI_MCA_orte_default_hostfile="$run/hostfile" OMPI_MCA_plm_rsh_agent="$run/agent" \
      OMPI_MCA_plm_rsh_no_tree_spawn=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp \
      OMPI_MCA_btl_tcp_if_include=$net.0/24 OMPI_MCA_oob_tcp_if_include=$net.0/24 \
      OMPI_MCA_btl_tcp_flags=send,inplace,need-ack,need-csum,hetero-rdma \
      OMPI_MCA_hwloc_base_binding_policy=none \
      OMPI_MCA_oob_tcp_keepalive_time=2 OMPI_MCA_oob_tcp_keepalive_intvl=1 OMPI_MCA_oob_tcp_keepalive_probes=3
    # The keepalives: a host gone from the network (cut) ends the job in about 5 s, as the
    # launcher notices its daemon lost, instead of Open MPI's default 480 s (300 + 9 x 20).
    # All hosts share this machine's cores, which Open MPI cannot see per node: when the
    # hostfile holds more slots than cores, idle ranks should yield rather than spin.
    [ "$(awk -F'slots=' '{s += $2} END {print s}' "$run/hostfile")" -le "$(nproc)" ] || export OMPI_MCA_mpi_yield_when_idle=1
    enter host1 "${MPIRUN:-mpirun}" "${rest[@]}" ;;
esac
