#!/bin/bash
# A results file whose global heap (where HDF5 keeps variable-length strings) has its free-space
# object shrunk by 64 bytes sends HDF5 1.10 into an endless loop when the strings are read. The
# tools read files in a child with a time limit: this checks that such a file ends as a one-line
# error naming the hang, with exit status 2, instead of a hang.
# usage: looping_heap.sh FIXTURE.h5 WORKDIR COMMAND... (the word FILE in COMMAND is replaced)
set -u
fixture=$1 work=$2
shift 2
mkdir -p "$work"
damaged=$work/looping-heap-$(basename "$fixture")
python3 - "$fixture" "$damaged" <<'PY' || exit 1
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
# The first collection with a free-space object (a full one has none: its objects end at its end).
at = data.find(b"GCOL")
while at >= 0:
    end = at + struct.unpack_from("<Q", data, at + 8)[0]
    p = at + 16  # after "GCOL", version, 3 reserved bytes and the 8-byte collection size
    while p + 16 <= end:
        index, _, _, size = struct.unpack_from("<HHIQ", data, p)
        if index == 0:  # the free-space object ends the collection
            break
        p += 16 + (size + 7) // 8 * 8
    if p + 16 <= end and index == 0 and size > 64:
        break
    at = data.find(b"GCOL", at + 4)
if at < 0:
    sys.exit(f"{sys.argv[1]}: no global heap collection with free space found")
struct.pack_into("<Q", data, p + 8, size - 64)
open(sys.argv[2], "wb").write(data)
PY
args=()
for a in "$@"; do
  if [ "$a" = FILE ]; then args+=("$damaged"); else args+=("$a"); fi
done
start=$(date +%s)
out=$(COMMSCOPE_READ_TIMEOUT=2 timeout 60 "${args[@]}" 2>&1 >/dev/null)
rc=$?
echo "exit $rc after $(($(date +%s) - start)) s: $out"
[ "$rc" = 2 ] || { echo "FAIL: expected exit status 2"; exit 1; }
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || { echo "FAIL: expected one line"; exit 1; }
case "$out" in
  *"did not finish reading it in 2 s"*) ;;
  *) echo "FAIL: expected 'did not finish reading it in 2 s'"; exit 1 ;;
esac
echo PASS
