# A blocking read ended by -UNBLOCKED (issue 34), sourced by Tests/worker/run.sh: it uses its
# Redis, mock and helpers, and is run by name like its own (WORKER_TESTS="redis_unblocked").
# A Redis Cluster master demoted to a replica in a failover (a manual CLUSTER FAILOVER) ends its
# clients' blocking XREADGROUPs with "-UNBLOCKED force unblock ..."; CLIENT UNBLOCK id ERROR
# ends one the same way on any server, which is how this test makes it happen.

# unblock_readers: ends with an error every client blocked in XREADGROUP; fails unless one was
# (a read can end by its own timeout between the list and the unblock: then the next try).
unblock_readers() {
  local id done=1
  for id in $(rcli CLIENT LIST | awk '/ cmd=xreadgroup / && / flags=[^ ]*b/ { for (i = 1; i <= NF; i++) if ($i ~ /^id=/) print substr($i, 4) }'); do
    [ "$(rcli CLIENT UNBLOCK "$id" ERROR)" = 1 ] && done=0
  done
  return $done
}

test_redis_unblocked() {
name="A blocking read answered -UNBLOCKED (a failover's demoted master): the worker takes it as a lost connection and reconnects, not as a failed read; every id exactly one outcome"
shard=unblocked
local n=400 st=0
notifications $shard "$n" > "$out/$shard.jsonl"
head -n $((n / 2)) "$out/$shard.jsonl" > "$out/$shard-1.jsonl"; tail -n $((n / 2)) "$out/$shard.jsonl" > "$out/$shard-2.jsonl"
config "$out/$shard.json" $shard "$mock_port"
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard-1.jsonl" > /dev/null
start_worker unblocked-a "$out/$shard.json"; a=$WORKER_PID
# Once the first half is done, the worker waits in a blocking read: end every one of them.
if wait_until 60 has_outcomes $shard $((n / 2)) && wait_until 30 unblock_readers; then
  if wait_until 30 grep -q 'msg="connected to Redis again"' "$out/unblocked-a.err" \
     && "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard-2.jsonl" > /dev/null \
     && wait_until 60 has_outcomes $shard "$n"; then
    stop_worker "$a" || st=$?
    if [ "$st" -eq 0 ] && [ "$(pending_count $shard)" -eq 0 ] && check $shard > /dev/null \
       && grep 'msg="lost Redis"' "$out/unblocked-a.err" | grep -q UNBLOCKED \
       && ! grep 'msg="queue operation failed"' "$out/unblocked-a.err" | grep -q UNBLOCKED
    then ok "$name ($(grep -c 'msg="lost Redis".*UNBLOCKED' "$out/unblocked-a.err") read(s) unblocked; $(sed -n 's/.* redis_reconnects=\([0-9]*\).*/\1/p' "$out/unblocked-a.err" | tail -n 1) reconnect(s))"
    else bad "$name (exit $st, pending $(pending_count $shard); $(grep UNBLOCKED "$out/unblocked-a.err" | head -n 1))"; fi
  else kill -9 "$a" 2>/dev/null || true; bad "$name (no reconnect, or no progress after it: outcomes $(outcome_count $shard); $(grep UNBLOCKED "$out/unblocked-a.err" | head -n 1))"; fi
else kill -9 "$a" 2>/dev/null || true; bad "$name (no blocked read ended: outcomes $(outcome_count $shard))"; fi
}
