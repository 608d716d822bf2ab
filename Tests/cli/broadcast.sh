#!/usr/bin/env bash
# End-to-end tests of `swiftpush channels create|get|delete|list` and `swiftpush send --channel`
# against a mock with a channel management listener (TLS + HTTP/2 on loopback).
# usage: Tests/cli/broadcast.sh BUILD_DIR   (run by Tests/cli/run.sh)
# Prints one line per test and "cli-broadcast: N passed, N failed"; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: broadcast.sh BUILD_DIR}" && pwd)
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
test_pki
mock_workspace

mock_start cli-broadcast "$cli" "$pki" --channel-port-file "$out/channel-port" --broadcast-disabled com.example.disabled
port=$MOCK_PORT
channel_port=$(cat "$out/channel-port")

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; sed 's/^/    /' "$out/stdout" "$out/stderr"; fail=$((fail + 1)); }

auth=(--host localhost --port "$port" --ca-file "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001
      --team-id TEAM123456)
manage=("${auth[@]}" --channel-host localhost --channel-port "$channel_port" --bundle-id com.example.app)
update='{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}'
printf '%s' "$update" > "$out/update.json"

# run EXPECTED_STATUS COMMAND ARGS...: keeps stdout/stderr in $out; 0 when the exit status matches.
run() {
  local expected=$1; shift
  local status=0
  "$cli" "$@" > "$out/stdout" 2> "$out/stderr" || status=$?
  [ "$status" -eq "$expected" ] || { echo "    exit status $status, expected $expected"; return 1; }
}

name="channels create prints the new id; get, list see it; send --channel is ACCEPTED with a request id"
if run 0 channels create "${manage[@]}" && id=$(cat "$out/stdout") && [ -n "$id" ] \
   && grep -qE '^apns-request-id=[0-9a-f-]{36}$' "$out/stderr" \
   && run 0 channels get "${manage[@]}" --channel "$id" && [ "$(cat "$out/stdout")" = most-recent ] \
   && run 0 channels list "${manage[@]}" && grep -qxF "$id" "$out/stdout" \
   && run 0 send "${auth[@]}" --topic com.example.app --channel "$id" --payload "$out/update.json" \
       --expiration 1900000000 \
   && grep -qF "$id ACCEPTED 200 - apns-id=" "$out/stdout" && grep -qE " apns-id=[0-9a-f-]{36}$" "$out/stdout" \
   && grep -q "^1 notification: 1 accepted, 0 rejected, 0 failed$" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="channels delete, then send --channel is REJECTED ChannelNotRegistered (exit 1) and get fails (exit 1)"
if run 0 channels delete "${manage[@]}" --channel "$id" && [ ! -s "$out/stdout" ] \
   && run 1 send "${auth[@]}" --topic com.example.app --channel "$id" --payload "$out/update.json" --json \
   && grep -qF "{\"channel\":\"$id\",\"outcome\":\"REJECTED\",\"status\":400,\"reason\":\"ChannelNotRegistered\"" "$out/stdout" \
   && run 1 channels get "${manage[@]}" --channel "$id" && grep -qx "400 ChannelNotRegistered" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="--json objects; --storage none makes a channel that takes expiration 0 only"
if run 0 channels create "${manage[@]}" --storage none --json \
   && id=$(sed -n 's/.*"channel_id":"\([^"]*\)".*/\1/p' "$out/stdout") && [ -n "$id" ] \
   && grep -qE '^\{"status":201,"request_id":"[0-9a-f-]{36}","channel_id":"' "$out/stdout" \
   && run 0 channels get "${manage[@]}" --channel "$id" --json && grep -q '"storage":"none"' "$out/stdout" \
   && run 0 channels list "${manage[@]}" --json && grep -qF "\"channels\":[\"$id\"]" "$out/stdout" \
   && run 0 send "${auth[@]}" --topic com.example.app --channel "$id" --payload "$out/update.json" \
   && run 1 send "${auth[@]}" --topic com.example.app --channel "$id" --payload "$out/update.json" --expiration 1900000000 \
   && grep -q " REJECTED 400 BadExpirationDate " "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="APNs refusals exit 1 with their reason: FeatureNotEnabled"
if run 1 channels create "${auth[@]}" --channel-host localhost --channel-port "$channel_port" --bundle-id com.example.disabled \
   && grep -qx "400 FeatureNotEnabled" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="usage errors exit 2 before connecting: no action, bad action, bad channel id, tokens with --channel, no management host"
if run 2 channels "${manage[@]}" && grep -q "create, get, delete or list" "$out/stderr" \
   && run 2 channels rename "${manage[@]}" && grep -q "unknown action 'rename'" "$out/stderr" \
   && run 2 channels get "${manage[@]}" --channel 'not base64' && grep -q "base64" "$out/stderr" \
   && run 2 channels create "${auth[@]}" --bundle-id com.example.app && grep -q "channel-host" "$out/stderr" \
   && run 2 send "${auth[@]}" --topic com.example.app --channel AAAAAAAAAAAAAAAAAAAAAA== --token 00fc13ad --title x \
   && grep -q "no --token" "$out/stderr" \
   && run 2 send "${auth[@]}" --topic com.example.app.push-type.liveactivity --channel AAAAAAAAAAAAAAAAAAAAAA== \
       --payload "$out/update.json" && grep -q "suffix" "$out/stderr" \
   && run 0 channels --help && grep -q "USAGE: swiftpush channels create|get|delete|list" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="the README's broadcast example in sh, as written there, against the mock"
python3 scripts/readme-block.py README.md "Broadcast push" sh > "$out/readme.sh"
mkdir -p "$out/readme" "$out/bin" && cp "$pki/AuthKey_TESTKEY001.p8" "$out/readme/" && ln -sf "$cli" "$out/bin/swiftpush"
if (cd "$out/readme" && PATH="$out/bin:$PATH" \
      APNS="--host localhost --port $port --ca-file $pki/ca.pem" MANAGE="--channel-host localhost --channel-port $channel_port" \
      bash -e "$out/readme.sh") > "$out/stdout" 2> "$out/stderr" \
   && grep -qE " ACCEPTED 200 - apns-id=[0-9a-f-]{36}$" "$out/stdout" && grep -q "^1 notification: 1 accepted" "$out/stdout"
then ok "$name"; else bad "$name"; fi

echo "cli-broadcast: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
