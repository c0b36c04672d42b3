#!/usr/bin/env bash
# chakra_protoc.sh PROTOC FIXTURE_EXE EXPORT_EXE IMPORT_EXE DUMP_EXE WORKDIR
#
# protobuf's own tool as the judge of commscope's Chakra bytes (chakra_min.proto: Chakra's
# names and field numbers): every message commscope-export writes decodes with
# protoc --decode, with the values the profile holds; and a two-rank trace protoc --encode
# writes (packed dependencies, a negative int32, a node listed before the one it depends on,
# a CPU operator) imports with commscope-import chakra as it should. Exit 77 (skipped) without
# protoc (Debian: protobuf-compiler).
set -euo pipefail
protoc=$1 fixture=$2 export=$3 import=$4 dump=$5 work=$6
command -v "$protoc" >/dev/null 2>&1 || { echo "chakra_protoc.sh: no protoc (Debian: protobuf-compiler): skipped"; exit 77; }
proto_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
proto=(-I "$proto_dir" chakra_min.proto)
rm -rf "$work"
mkdir -p "$work"
fail() {
  echo "chakra_protoc.sh: FAILED: $*" >&2
  exit 1
}

# --- commscope's bytes, read by protoc
"$fixture" "$work/p.h5" >/dev/null
"$export" chakra "$work/p.h5" -o "$work/p" >/dev/null
# Splits a length-delimited stream into msg.0, msg.1, ... (a varint, then that many bytes).
split() {
  python3 - "$1" "$2" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
pos = n = 0
while pos < len(data):
    length = shift = 0
    while True:
        b = data[pos]; pos += 1
        length |= (b & 0x7F) << shift; shift += 7
        if b < 0x80: break
    open(f"{sys.argv[2]}.{n}", "wb").write(data[pos:pos + length]); pos += length; n += 1
print(n)
PY
}
messages=$(split "$work/p.0.et" "$work/msg")
[ "$messages" -gt 2 ] || fail "p.0.et holds $messages messages"
"$protoc" "${proto[@]}" --decode=ChakraProtoMsg.GlobalMetadata <"$work/msg.0" >"$work/meta.txt"
grep -q '^version: "1.0.0"$' "$work/meta.txt" || fail "GlobalMetadata.version: $(cat "$work/meta.txt")"
grep -q 'string_val: "commscope-export chakra"' "$work/meta.txt" || fail "no source attribute"
: >"$work/nodes.txt"
for ((i = 1; i < messages; i++)); do
  "$protoc" "${proto[@]}" --decode=ChakraProtoMsg.Node <"$work/msg.$i" >>"$work/nodes.txt" || fail "message $i"
done
[ "$(grep -c '^type: COMM_COLL_NODE$' "$work/nodes.txt")" -eq 6 ] || fail "not 6 collectives in rank 0's nodes"
[ "$(grep -c '^type: COMP_NODE$' "$work/nodes.txt")" -eq $((messages - 7)) ] || fail "the rest are not compute"
grep -q 'int64_val: 67108864' "$work/nodes.txt" || fail "no comm_size of 64 MiB (the fixture's NCCL allreduce)"
grep -q 'string_val: "ncclAllReduce"' "$work/nodes.txt" || fail "no commscope.name ncclAllReduce"
echo "protoc decoded $((messages - 1)) nodes of p.0.et"

# --- protobuf's bytes, read by commscope
encode() {  # TYPE TEXT OUT: appends one length-delimited message
  printf '%s\n' "$2" | "$protoc" "${proto[@]}" --encode="ChakraProtoMsg.$1" >"$work/one.bin"
  python3 -c "
import sys
n = len(open('$work/one.bin', 'rb').read()); out = b''
while True:
    out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)]); n >>= 7
    if not n: break
sys.stdout.buffer.write(out + open('$work/one.bin', 'rb').read())" >>"$3"
}
for r in 0 1; do
  f="$work/foreign.$r.et"
  peer=$((1 - r))
  encode GlobalMetadata 'attr { name: "schema" string_val: "1.0.2-chakra.0.0.4" }' "$f"
  encode Node "id: 7 name: \"gemm\" type: COMP_NODE data_deps: [5, 6] duration_micros: 30" "$f"
  encode Node "id: 5 name: \"c10d::allreduce_\" type: COMM_COLL_NODE duration_micros: 9
               attr { name: \"is_cpu_op\" bool_val: true }" "$f"
  encode Node "id: 6 name: \"ncclKernel_AllReduce_RING_LL_Sum_float\" type: COMM_COLL_NODE data_deps: [5]
               duration_micros: 12 attr { name: \"is_cpu_op\" bool_val: false }
               attr { name: \"comm_type\" int64_val: 0 } attr { name: \"comm_size\" int64_val: 4096 }
               attr { name: \"pg_name\" string_val: \"0\" }" "$f"
  encode Node "id: 8 name: \"$([ $r = 0 ] && echo send || echo recv)\"
               type: $([ $r = 0 ] && echo COMM_SEND_NODE || echo COMM_RECV_NODE) data_deps: 7 duration_micros: 2
               attr { name: \"comm_src\" int32_val: $([ $r = 0 ] && echo 0 || echo $peer) }
               attr { name: \"comm_dst\" int32_val: $([ $r = 0 ] && echo $peer || echo 1) }
               attr { name: \"comm_tag\" int32_val: -5 } attr { name: \"comm_size\" int64_val: 64 }" "$f"
done
out=$("$import" chakra "$work/foreign" -o "$work/foreign.h5") || fail "import of protoc's traces"
echo "$out"
grep -q 'Chakra schema 1.0.2-chakra.0.0.4, 4 nodes' <<<"$out" || fail "the metadata or node count"
[ "$(grep -c 'imported: COMM_COLL_NODE 1, COMM_RECV_NODE 1, compute 1\|imported: COMM_COLL_NODE 1, COMM_SEND_NODE 1, compute 1' <<<"$out")" -eq 2 ] ||
  fail "not one collective, one message and one compute node per rank"
grep -q 'left out: CPU operators beside device nodes 1' <<<"$out" || fail "the CPU operator"
# In data-dependency order from 0 (the kernel before the compute listed first, then the message):
# [start, end, seq, bytes, name, track kind, communicator label] per communication.
"$dump" "$work/foreign.h5" | python3 -c '
import json, sys
d = json.load(sys.stdin)
want = [[[0, 12000, 0, 4096, "allreduce", 0, "pg0[0,1]"], [42000, 44000, 0, 64, name, 0, "p2p[0>1]"]]
        for name in ("send", "recv")]
got = [r["communication"] for r in d["events"]]
assert got == want, got
assert d["clock"] == "chakra (synthetic)", d["clock"]
' || fail "the imported communication"
echo "chakra_protoc.sh: passed"
