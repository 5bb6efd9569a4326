#!/bin/bash
# In a private netns: dbench 4.0's tbench and ours, each against its own server, under strace -c.
set -u
ip link set lo up
out=$1
/usr/bin/tbench_srv >/dev/null 2>&1 & s=$!
sleep 0.5
strace -f -c -o "$out/dbench.strace" /usr/bin/tbench 1 -t 4 127.0.0.1 > "$out/dbench.out" 2>&1
kill $s; wait $s 2>/dev/null
/work/main/build/tbench_srv >/dev/null 2>&1 & s=$!
sleep 0.5
strace -f -c -o "$out/ours.strace" /work/main/build/tbench -t 4 1 127.0.0.1 > "$out/ours.out" 2>&1
kill $s; wait $s 2>/dev/null
