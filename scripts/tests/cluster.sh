#!/usr/bin/env bash
# The ctest fixture and checks of the emulated cluster (label `cluster`, scripts/tests.cmake):
#
#   cluster.sh up PREFIX [UP-ARGS...]     fixture setup: scripts/emulate-cluster.sh up 2 --slots 3
#                                         (a cluster left by a killed run is removed first);
#                                         exit 77 with the reason where none can be made here
#   cluster.sh down PREFIX                fixture cleanup (idempotent)
#   cluster.sh run PREFIX [--fresh FILE] -- COMMAND...
#                                         COMMAND, or exit 77 with the reason when the cluster is
#                                         not up; --fresh removes FILE first (a stale result)
#   cluster.sh hosts PREFIX FILE.h5 NHOSTS HOSTS
#                                         the bench file's /meta records NHOSTS hosts as HOSTS
#   cluster.sh shaped PREFIX BENCH MIN_RATIO
#                                         allreduce 1 MiB, 1 rank per host, on PREFIX's cluster
#                                         and on one (PREFIX-s) whose host2 link is 100mbit:
#                                         shaped / unshaped time >= MIN_RATIO for ring and mpi
#   cluster.sh doctor PREFIX DOCTOR REPORT clean|link|cpu
#                                         commscope-doctor on its own 4 hosts (PREFIX-d, 1 slot
#                                         each, 1gbit links): clean; host3's link at 100mbit
#                                         (the report names host3's links and nothing else); host3
#                                         throttled to 10% of a CPU (host3 named slow, nothing
#                                         named that is not host3; exit 77 when the machine was
#                                         too busy for the probes to be judged)
#   cluster.sh cut PREFIX BENCH T         allreduce sweep on its own 2 hosts (PREFIX-c, 1 slot
#                                         each) with -T T; host2's link deleted once rows are
#                                         out: the job ends within T + 10 s, host2 and the
#                                         collective named, the rows before kept in the file
#
# The reason a fixture could not be made is kept in ./PREFIX.why (the tests' working folder),
# so that every test that needs it skips saying why.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
emulate=$root/scripts/emulate-cluster.sh
cmd=${1:-} prefix=${2:-}
[ -n "$cmd" ] && [ -n "$prefix" ] || { echo "usage: cluster.sh up|down|run|hosts|shaped PREFIX ..." >&2; exit 2; }
shift 2
why=$PWD/$prefix.why

not_up() {  # exit 77 saying why the cluster is missing
  if [ -s "$why" ]; then
    echo "cluster.sh: skipped: no emulated cluster here: $(cat "$why")"
  else
    echo "cluster.sh: skipped: emulated cluster '$prefix' is not up (its fixture test did not make it)"
  fi
  exit 77
}
is_up() { [ -x "/run/$prefix/agent" ]; }
# own SUFFIX UP-ARGS...: a cluster of the check's own, PREFIX-SUFFIX (named in $own), made after
# removing one a killed run left, and removed when the check ends (own-cluster.sh).
own_suffixes="s d c"  # shaped, doctor, cut: the fixture's cleanup removes them too
me=cluster.sh
. "$root/scripts/tests/own-cluster.sh"
own() {
  own=$prefix-$1
  shift
  own_cluster "$own" "$@"
}

case "$cmd" in
  up)
    rm -f "$why"
    "$emulate" down --prefix "$prefix" >/dev/null 2>&1
    out=$("$emulate" up 2 --slots 3 --prefix "$prefix" "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    if [ $rc = 77 ]; then
      printf '%s\n' "$out" | sed -n 's/^.*cannot emulate a cluster here: //p' | tail -1 >"$why"
      echo "cluster.sh: skipped: $(cat "$why")"
    fi
    [ $rc != 0 ] || "$emulate" status --prefix "$prefix"
    exit $rc ;;
  down)
    "$emulate" down --prefix "$prefix"
    rc=$?
    for suffix in $own_suffixes; do "$emulate" down --prefix "$prefix-$suffix" >/dev/null 2>&1; done  # if killed
    exit $rc ;;
  run)
    if [ "${1:-}" = --fresh ]; then rm -f "$2"; shift 2; fi
    [ "${1:-}" = -- ] && shift
    is_up || not_up
    exec "$@" ;;
  hosts)
    is_up || not_up
    file=$1 want_n=$2 want_hosts=$3
    [ -s "$file" ] || { echo "cluster.sh: FAIL: no results file $file (did the bench run fail?)"; exit 1; }
    attr() { h5dump -a "/meta/$1" "$file" | sed -n 's/^ *(0): "\(.*\)"$/\1/p'; }
    n=$(attr nhosts) hosts=$(attr hosts)
    echo "cluster.sh: $file: nhosts '$n', hosts '$hosts'"
    [ "$n" = "$want_n" ] && [ "$hosts" = "$want_hosts" ] ||
      { echo "cluster.sh: FAIL: wanted nhosts '$want_n', hosts '$want_hosts'"; exit 1; }
    exit 0 ;;
  shaped)
    is_up || not_up
    bench=$1 min_ratio=$2
    own s 2 --slots 1 --host-link host2=100mbit
    slow=$own
    # Out-of-place time (us) of the 1 MiB line of each algorithm: size count type redop root time
    # ... (nccl-tests' columns), the algorithm last.
    times() {
      "$emulate" mpirun --prefix "$1" -np 2 --map-by node "$bench" allreduce --algo ring,mpi -b 1M -e 1M \
        -n 3 -w 1 -c 1 | tee /dev/stderr | awk '$1 == 1048576 {print $NF, $6}'
    }
    fast=$(times "$prefix") || exit 1
    shaped=$(times "$slow") || exit 1
    fail=0
    # Both ends of a shaped link send segments of at most 8 KiB (htb passes a whole GSO segment,
    # 64 KiB by default, at the veth's speed while it has tokens) in jumbo frames, with a burst of
    # 250 us of the link and at least two frames, 18000 B at 100mbit (tc's default, one packet,
    # held a 1gbit link at 62% of its rate where the kernel woke htb late): emulate-cluster.sh's
    # shape().
    while read -r ns dev; do
      link=$(ip -n "$ns" -d link show dev "$dev")
      gso=$(sed -n 's/.* gso_max_size \([0-9]*\).*/\1/p' <<<"$link") mtu=$(sed -n 's/.* mtu \([0-9]*\).*/\1/p' <<<"$link")
      burst=$(tc -n "$ns" class show dev "$dev" | sed -n 's/.* burst \([0-9]*\)b.*/\1/p')
      [ "$gso" = 8192 ] || { echo "cluster.sh: FAIL: $ns $dev: gso_max_size ${gso:-unknown}, not 8192"; fail=1; }
      [ "$mtu" = 9000 ] || { echo "cluster.sh: FAIL: $ns $dev: mtu ${mtu:-unknown}, not 9000"; fail=1; }
      [ "${burst:-0}" -ge 18000 ] || { echo "cluster.sh: FAIL: $ns $dev: htb burst ${burst:-unknown} B, not two jumbo frames (18000 B) at 100mbit"; fail=1; }
    done <<<"$slow-host2 eth0
$slow-switch vhost2"
    for algo in ring mpi; do
      f=$(awk -v a=$algo '$1 == a {print $2}' <<<"$fast") s=$(awk -v a=$algo '$1 == a {print $2}' <<<"$shaped")
      [ -n "$f" ] && [ -n "$s" ] || { echo "cluster.sh: FAIL: no 1 MiB $algo line"; fail=1; continue; }
      if awk -v f="$f" -v s="$s" -v m="$min_ratio" 'BEGIN {exit !(s >= m * f)}'; then
        verdict=ok
      else
        verdict="FAIL (wanted at least ${min_ratio}x)"
        fail=1
      fi
      awk -v a=$algo -v f="$f" -v s="$s" -v v="$verdict" \
        'BEGIN {printf "cluster.sh: allreduce 1 MiB %s: unshaped %.0f us, host2 at 100mbit %.0f us: %.1fx %s\n", a, f, s, s / f, v}'
    done
    exit $fail ;;
  doctor)
    is_up || not_up
    doctor=$1 report=$2 fault=$3
    up=(4 --slots 1 --link 1gbit)
    [ "$fault" != link ] || up+=(--host-link host3=100mbit)
    own d "${up[@]}"
    d=$own
    [ "$fault" != cpu ] || "$emulate" throttle host3 10 --prefix "$d" || exit 1
    "$emulate" mpirun --prefix "$d" -np 4 "$doctor" -T 60 -o "$PWD/$d.h5" || exit 1
    findings=$(dirname "${BASH_SOURCE[0]}")/doctor-findings.sh
    # Probes that shared their CPUs with other work (this machine busy with other jobs) are not
    # judged: a throttled host cannot be told from the load then, and the check skips saying so.
    shared=$(h5dump -a /meta/probes_shared "$PWD/$d.h5" 2>/dev/null | sed -n 's/^ *(0): "\(.*\)"$/\1/p')
    if [ "$fault" = cpu ] && [ -n "$shared" ]; then
      echo "cluster.sh: skipped: the machine was busy during the probes, which are not judged ($shared)"
      exit 77
    fi
    # Not exec: the EXIT trap must still remove the doctor's cluster.
    case $fault in
      clean) "$findings" "$report" "$PWD/$d.h5" none ;;
      link) "$findings" "$report" "$PWD/$d.h5" "slow host links: host3" ;;
      cpu) "$findings" "$report" "$PWD/$d.h5" --about host3 "slow node: host3: sgemm" ;;
      *) echo "cluster.sh: doctor: unknown fault '$fault'" >&2; exit 2 ;;
    esac
    exit $? ;;
  cut)
    is_up || not_up
    bench=$1 t=$2
    out=$PWD/$prefix-c.h5 log=$PWD/$prefix-c.log
    rm -f "$out" "$out.partial"
    own c 2 --slots 1
    c=$own
    "$emulate" mpirun --prefix "$c" -np 2 "$bench" allreduce --algo ring -b 1K -e 1G -f 2 -n 5 -w 1 -T "$t" \
      --out "$out" >"$log" 2>&1 &
    job=$!
    # Cut once the 1 MiB row is out: the sweep is then well inside its long sizes.
    for _ in $(seq 600); do grep -q '^ *1048576 ' "$log" && break; sleep 0.1; done
    grep -q '^ *1048576 ' "$log" || { cat "$log"; echo "cluster.sh: FAIL: no 1 MiB row within 60 s"; exit 1; }
    "$emulate" cut host2 --prefix "$c" || exit 1
    cut_at=$(date +%s%N)
    limit=$((t + 10))
    for _ in $(seq $((limit * 10))); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
    ended=$(( ($(date +%s%N) - cut_at) / 1000000 ))
    fail=0
    if kill -0 $job 2>/dev/null; then
      echo "cluster.sh: FAIL: the job still runs $limit s after the cut"; fail=1
      pkill -KILL -f "$bench" 2>/dev/null
    fi
    wait $job
    rc=$?
    cat "$log"
    echo "cluster.sh: the job ended $((ended / 1000)).$(printf %03d $((ended % 1000))) s after host2 was cut (-T $t), exit status $rc"
    [ "$rc" != 0 ] || { echo "cluster.sh: FAIL: the job ended with status 0"; fail=1; }
    # Named by the rank (a timeout: the peer it waits on, or the peers silent since) or by the
    # launcher (its daemon on host2 lost); the collective by the rank (timeout or signal).
    grep -Eq '(on host2 |Remote daemon: .* on node host2)' "$log" || { echo "cluster.sh: FAIL: host2 is not named"; fail=1; }
    grep -Eq '(timeout|stopped by SIG[A-Z]+)[ :].*allreduce' "$log" || { echo "cluster.sh: FAIL: the collective is not named"; fail=1; }
    rows=$(h5dump -H -d /results "$out" 2>/dev/null | sed -n 's/.*SIMPLE { ( \([0-9]*\) ).*/\1/p')
    echo "cluster.sh: $out keeps ${rows:-no} rows"
    [ "${rows:-0}" -ge 22 ] || { echo "cluster.sh: FAIL: wanted the 22 rows up to 1 MiB (or more) kept"; fail=1; }
    exit $fail ;;
  *) echo "cluster.sh: unknown command '$cmd'" >&2; exit 2 ;;
esac
