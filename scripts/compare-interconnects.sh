#!/usr/bin/env bash
# Compare transports with commscope-bench and commscope-report compare. On one machine:
#   vader  Open MPI's shared-memory transport (btl vader; not the shm algorithm)
#   tcp    TCP over the loopback interface (btl tcp)
#   slow   TCP over the loopback of a network namespace whose link is shaped with tc: a rate
#          limit (tbf, or netem with --delay when the kernel has sch_netem); needs root
# Only the algorithms whose data cross the transport are run: mpi, ring, tree, rhd, and hier
# where ranks are on several hosts (--cluster, --hostfile). The shm algorithm, and hier on one
# node, move data through the node's shared memory and never touch the link.
# On a cluster, pass your own transports as NAME=MCA-ARGS pairs, e.g.
#   scripts/compare-interconnects.sh --hostfile hosts --transport ib="--mca pml ucx" \
#                                    --transport tcp="--mca pml ob1 --mca btl self,tcp"
# Between emulated hosts (--cluster N, root; scripts/emulate-cluster.sh): one run per link
# setting of --links (default unshaped,10gbit,1gbit), each on a cluster of N hosts brought up
# with that --link rate (and --delay) and taken down after; --ranks spread over the hosts.
#
#   scripts/compare-interconnects.sh [--quick] [--ranks N] [--size BYTES] [--out DIR] [--rate 1gbit]
#                                    [--delay 100us] [--hostfile FILE] [--transport NAME=ARGS]...
#                                    [--cluster N [--links RATE,...]] [--no-build] [--bin DIR]
# --quick: allreduce only, 5 timed calls per size (sizes 16 B, 64 B, ..., 1 MiB, ..., 64 MiB either way).
# --size: the largest size (default 64M). --bin: the binaries in DIR (another build; implies --no-build).
set -euo pipefail

# --help: this file's opening comment, up to the first line of code, without the '# '.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ranks=2
quick=0
out=""
rate=1gbit
delay=""
hostfile=""
build=1
bin=""
size=64M
cluster=""
links=unshaped,10gbit,1gbit
transports=()
die() { echo "compare-interconnects.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --ranks) [ $# -ge 2 ] || die "--ranks needs a value"; ranks=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    --rate) [ $# -ge 2 ] || die "--rate needs a value (e.g. 1gbit)"; rate=$2; shift 2 ;;
    --delay) [ $# -ge 2 ] || die "--delay needs a value (e.g. 100us)"; delay=$2; shift 2 ;;
    --hostfile) [ $# -ge 2 ] || die "--hostfile needs a file"; hostfile=$2; shift 2 ;;
    --size) [ $# -ge 2 ] || die "--size needs a value (e.g. 1M)"; size=$2; shift 2 ;;
    --cluster) [ $# -ge 2 ] || die "--cluster needs a host count"; cluster=$2; shift 2 ;;
    --links) [ $# -ge 2 ] || die "--links needs RATE,... (e.g. unshaped,1gbit)"; links=$2; shift 2 ;;
    --transport) [ $# -ge 2 ] || die "--transport needs NAME=ARGS"; transports+=("$2"); shift 2 ;;
    --no-build) build=0; shift ;;
    --bin) [ $# -ge 2 ] || die "--bin needs a folder"; bin=$2; build=0; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
# What a shaped link carries, for the bench's expectations (docs/verdicts.md): RATE in GB/s, from tc's
# notation (1gbit, 100mbit, 10Gbit).
gbytes_per_s() {
  python3 - "$1" <<'PY'
import re, sys
m = re.fullmatch(r"([0-9.]+)([kmgt]?)(?:i?)(bit|bps)", sys.argv[1].lower())
if not m:
    sys.exit(1)
scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
print(float(m.group(1)) * scale / (8 if m.group(3) == "bit" else 1) / 1e9)
PY
}

case "$ranks" in ''|*[!0-9]*|0|1) die "--ranks needs an integer of at least 2, not '$ranks'" ;; esac
gbytes_per_s "$rate" >/dev/null || die "--rate: a tc rate like 1gbit or 100mbit, not '$rate'"
[ -z "$hostfile" ] || [ -r "$hostfile" ] || die "cannot read the hostfile '$hostfile'"
for t in ${transports[@]+"${transports[@]}"}; do
  name=${t%%=*}
  [ -n "$name" ] && [ "$name" != "$t" ] || die "--transport wants NAME=ARGS, not '$t'"
done
if [ -n "$cluster" ]; then
  case "$cluster" in ''|*[!0-9]*|0) die "--cluster needs a positive host count, not '$cluster'" ;; esac
  [ ${#transports[@]} = 0 ] && [ -z "$hostfile" ] || die "--cluster compares --links: not with --transport or --hostfile"
  for l in ${links//,/ }; do
    [ "$l" = unshaped ] || [[ $l =~ ^[0-9]+(\.[0-9]+)?([kKmMgGtT]i?)?(bit|bps)$ ]] ||
      die "--links: a tc rate like 1gbit or unshaped, not '$l'"
  done
  # emulate-cluster.sh takes milliseconds: 100us -> 0.1, 2ms -> 2
  case "$delay" in
    '') cdelay="" ;;
    *us) cdelay=$(awk -v d="${delay%us}" 'BEGIN {print d / 1000}') ;;
    *ms) cdelay=${delay%ms} ;;
    *) cdelay=$delay ;;
  esac
fi
out=${out:-$root/results/interconnects-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "cannot write the output folder '$out'"

if [ $build = 1 ]; then "$root/scripts/setup.sh" >/dev/null; fi
bin=${bin:-$root/build/bin}
for tool in commscope-bench commscope-report; do
  [ -x "$bin/$tool" ] || die "no $tool in $bin: build first (scripts/setup.sh), or give --bin the build's bin folder"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

colls=$([ $quick = 1 ] && echo allreduce || echo all)
iters=$([ $quick = 1 ] && echo 5 || echo 20)
algos=mpi,ring,tree,rhd  # what crosses the transport (see the top)
[ -z "$cluster$hostfile" ] || algos+=,hier
bench=("$bin/commscope-bench" "$colls" --algo "$algos" -b 16 -e "$size" -f 4 -n "$iters" -w 2 -c 1)
run() {  # run NAME [launcher command, default mpirun] -- mpirun arguments...
  local name=$1
  shift
  local launcher=()
  while [ "$1" != "--" ]; do launcher+=("$1"); shift; done
  shift
  [ ${#launcher[@]} -gt 0 ] || launcher=(mpirun)
  echo "== $name: ${*:-(defaults)}"
  # The bench's own status counts: it fails on wrong results (-c 1) as on errors; the file is kept
  # either way, but a failed or wrong run ends the comparison.
  local rc=0
  "${launcher[@]}" -np "$ranks" --oversubscribe --bind-to none ${hostfile:+--hostfile "$hostfile"} "$@" \
    "${bench[@]}" ${model[@]+"${model[@]}"} --out "$out/$name.h5" >"$out/$name.log" 2>&1 || rc=$?
  grep -E "^ +[0-9]+ " "$out/$name.log" || true
  [ $rc = 0 ] || die "the $name run failed with status $rc (wrong results or an error; see $out/$name.log)"
  [ -s "$out/$name.h5" ] || die "the $name run wrote no results (see $out/$name.log)"
  files+=("$out/$name.h5")
}

files=()
model=()  # the bench's model figures for the run at hand (--link-rate, --machine)
if [ -n "$cluster" ]; then
  # One emulated cluster per link setting, the same hosts and ranks each time.
  emulate=$root/scripts/emulate-cluster.sh
  cprefix=commscope-compare
  trap '"$emulate" down --prefix "$cprefix" >/dev/null 2>&1 || true' EXIT
  trap 'exit 130' INT TERM HUP
  for l in ${links//,/ }; do
    up=("$emulate" up "$cluster" --slots $(( (ranks + cluster - 1) / cluster )) --prefix "$cprefix")
    [ "$l" = unshaped ] || up+=(--link "$l")
    [ -z "$cdelay" ] || up+=(--delay "$cdelay")
    "${up[@]}" || { rc=$?; [ $rc != 77 ] || rc=2; echo "compare-interconnects.sh: no emulated cluster (above)" >&2; exit $rc; }
    # A shaped veth still reports its own 10000 Mb/s: the bench is told the rate it was shaped to.
    model=()
    [ "$l" = unshaped ] || model=(--link-rate "*=$l")
    run "$l" "$emulate" mpirun --prefix "$cprefix" -- --mca btl self,vader,tcp
    "$emulate" down --prefix "$cprefix" >/dev/null
  done
elif [ ${#transports[@]} -gt 0 ]; then
  for t in "${transports[@]}"; do
    name=${t%%=*}
    args=${t#*=}
    # shellcheck disable=SC2086  # the MCA arguments are words
    run "$name" -- $args
  done
else
  run vader -- --mca btl self,vader
  run tcp -- --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
  # The emulated link: a namespace of our own, its loopback shaped.
  ns="commscope-slow-$$"
  if [ "$(id -u)" = 0 ] && ip netns add "$ns" 2>/dev/null; then
    trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
    ip netns exec "$ns" ip link set lo up
    shaped=""
    if [ -n "$delay" ] && ip netns exec "$ns" tc qdisc add dev lo root netem delay "$delay" rate "$rate" 2>/dev/null; then
      shaped="netem delay $delay rate $rate"
    elif ip netns exec "$ns" tc qdisc add dev lo root tbf rate "$rate" burst 256kb latency 100ms 2>/dev/null; then
      shaped="tbf rate $rate"
      [ -z "$delay" ] || echo "   (no sch_netem in this kernel: --delay $delay not applied, rate only)"
    fi
    if [ -n "$shaped" ]; then
      echo "   slow link: loopback of namespace $ns shaped with $shaped"
      # The ranks share the one shaped loopback, both directions and every rank's flow of a step
      # (a ring's or rhd's p at once): each flow gets RATE / ranks, the figure the bench is given as
      # the rate between the node's ranks (its ping-pong, one direction at a time, reads RATE).
      per_flow=$(gbytes_per_s "$rate")
      per_flow=$(awk -v r="$per_flow" -v p="$ranks" 'BEGIN { printf "%.6g", r / p }')
      printf 'node host=* intra=%sGB/s intra.detail="%s on the loopback of namespace %s, shared by the %s ranks'"'"' flows of a step"\n' \
        "$per_flow" "$shaped" "$ns" "$ranks" >"$out/slow-machine.txt"
      model=(--machine "$out/slow-machine.txt")
      run slow ip netns exec "$ns" mpirun -- --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
      model=()
    else
      echo "== slow: skipped (tc cannot shape the namespace's loopback here)"
    fi
  else
    echo "== slow: skipped (needs root to create a network namespace)"
  fi
fi

echo "== commscope-report compare"
"$bin/commscope-report" compare "${files[@]}" -o "$out/report" >"$out/compare.txt"
for f in "${files[@]}"; do "$bin/commscope-report" bench "$f" -o "$out/report/$(basename "$f" .h5)" >/dev/null; done

echo
echo "allreduce busbw (GB/s), $ranks ranks${cluster:+ on $cluster emulated hosts}, algorithms that cross the link ($algos):"
python3 - "$out/report" "${files[@]}" <<'PY'
import csv, os, sys
report, files = sys.argv[1], sys.argv[2:]

def size_text(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return "%g %s" % (n, unit)
        n /= 1024

rows = []
for f in files:
    name = os.path.basename(f)[:-3]
    table = list(csv.DictReader(open(os.path.join(report, name, "allreduce.csv"), newline="")))
    largest = max(float(r["size_bytes"]) for r in table)
    for r in table:  # 1 MiB and the largest size
        if float(r["size_bytes"]) in (1 << 20, largest):
            rows.append((name, size_text(float(r["size_bytes"])),
                         {k[:-6]: v for k, v in r.items() if k.endswith("_busbw")}))
algos = sorted({a for _, _, d in rows for a in d})
print("  %-8s %-7s " % ("link", "size") + " ".join("%9s" % a for a in algos))
for name, size, d in rows:
    print("  %-8s %-7s " % (name, size) + " ".join("%9s" % d.get(a, "-") for a in algos))
PY
echo "Report: $out/report/report.md"
