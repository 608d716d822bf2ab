#!/usr/bin/env bash
# End-to-end tests of `swiftpush send` against a mock APNs server (TLS + HTTP/2 on loopback).
# usage: Tests/cli/run.sh BUILD_DIR   (holds the swiftpush-cli executable)
# Prints one line per test and "cli: N passed, N failed"; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
test_pki
mock_workspace

mock_start cli "$cli" "$pki"
port=$MOCK_PORT
# A second server that also accepts client certificates from the test CA (certificate auth).
mock_start cli-cert "$cli" "$pki" --client-ca "$pki/ca.pem"
cert_port=$MOCK_PORT

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; sed 's/^/    /' "$out/stdout" "$out/stderr"; fail=$((fail + 1)); }

t1=00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0
t2=b6f1f6a2c3d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddee
# Connection and credentials for the mock; each test adds the rest.
common=(--host localhost --port "$port" --ca-file "$pki/ca.pem"
        --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 --team-id TEAM123456)

# run EXPECTED_STATUS ARGS...: runs `swiftpush-cli send ARGS` (stdin from $stdin if set), keeps
# stdout/stderr in $out; returns 0 when the exit status is the expected one.
run() {
  local expected=$1; shift
  local status=0
  "$cli" send "$@" < "${stdin:-/dev/null}" > "$out/stdout" 2> "$out/stderr" || status=$?
  [ "$status" -eq "$expected" ] || { echo "    exit status $status, expected $expected"; return 1; }
}
lines() { grep -c "$1" "$out/stdout" || true; }

name="two tokens with --title/--body: two ACCEPTED lines and a summary, exit 0"
if run 0 "${common[@]}" --topic com.example.app --token "$t1" --token "$t2" --title "Hi" --body "caf\u00e9 \"quoted\" ☃" \
   && [ "$(lines " ACCEPTED 200 - apns-id=")" -eq 2 ] && grep -q "^$t1 ACCEPTED" "$out/stdout" \
   && grep -q "^$t2 ACCEPTED" "$out/stdout" && grep -q "^2 notifications: 2 accepted, 0 rejected, 0 failed$" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="an .apns file: the topic comes from its Simulator Target Bundle, exit 0"
cat > "$out/n.apns" <<'APNS'
{
  "Simulator Target Bundle": "com.example.app",
  "aps": { "alert": { "title": "From a file", "body": "caf\u00e9" }, "badge": 3 },
  "custom": [1, 2, 3]
}
APNS
if run 0 "${common[@]}" --apns-file "$out/n.apns" --token "$t1" && [ "$(lines " ACCEPTED 200 ")" -eq 1 ]
then ok "$name"; else bad "$name"; fi

name="an .apns file with a voip push type gets the .voip topic"
if run 0 "${common[@]}" --apns-file "$out/n.apns" --push-type voip --token "$t1" && [ "$(lines " ACCEPTED 200 ")" -eq 1 ]
then ok "$name"; else bad "$name"; fi

name="a payload on standard input (--payload -), exit 0"
echo '{"aps":{"alert":"from stdin"}}' > "$out/stdin.json"
if stdin=$out/stdin.json run 0 "${common[@]}" --topic com.example.app --payload - --token "$t2" \
   && [ "$(lines " ACCEPTED 200 ")" -eq 1 ]
then ok "$name"; else bad "$name"; fi

name="tokens from --tokens-file, comments and blank lines skipped"
printf '# devices\n%s\n\n  %s  \r\n' "$t1" "$t2" > "$out/tokens.txt"
if run 0 "${common[@]}" --topic com.example.app --tokens-file "$out/tokens.txt" --body x --badge 1 --sound default \
   --custom 'k={"a":[1,2]}' --content-available --push-type background && [ "$(lines " ACCEPTED 200 ")" -eq 2 ]
then ok "$name"; else bad "$name"; fi

name="an invalid token: nothing sent, a clear message, exit 2"
if run 2 "${common[@]}" --topic com.example.app --token "$t1" --token "12345" --body x \
   && grep -q "invalid device token '12345': device token has an odd number of hex digits" "$out/stderr" \
   && [ ! -s "$out/stdout" ]
then ok "$name"; else bad "$name"; fi

name="--json prints one JSON object per outcome and a summary object"
if run 0 "${common[@]}" --topic com.example.app --token "$t1" --token "$t2" --title T --json \
   && python3 - "$out/stdout" "$t1" "$t2" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
results, summary = rows[:-1], rows[-1]
assert sorted(r["token"] for r in results) == sorted(sys.argv[2:4]), results
for r in results:
    assert r["outcome"] == "ACCEPTED" and r["status"] == 200 and r["reason"] == "", r
    assert len(r["apns_id"]) == 36 and r["attempts"] >= 1, r
assert summary == {"summary": {"total": 2, "accepted": 2, "rejected": 0, "failed": 0}}, summary
PY
then ok "$name"; else bad "$name"; fi

name="a token signed by a key the server does not know: REJECTED 403 InvalidProviderToken, exit 1"
if run 1 --host localhost --port "$port" --ca-file "$pki/ca.pem" --key "$pki/AuthKey_WRONGKEY01.p8" \
     --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --token "$t1" --body x \
   && grep -q "^$t1 REJECTED 403 InvalidProviderToken apns-id=" "$out/stdout" \
   && grep -q "^1 notification: 0 accepted, 1 rejected, 0 failed$" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="certificate auth with --cert/--cert-key and with --p12/--password: ACCEPTED, exit 0"
cert_common=(--host localhost --port "$cert_port" --ca-file "$pki/ca.pem" --topic com.example.app --token "$t1" --body x)
if run 0 "${cert_common[@]}" --cert "$pki/client.pem" --cert-key "$pki/client.key" && grep -q "^$t1 ACCEPTED" "$out/stdout" \
   && run 0 "${cert_common[@]}" --p12 "$pki/client.p12" --password secret && grep -q "^$t1 ACCEPTED" "$out/stdout" \
   && run 2 "${cert_common[@]}" --p12 "$pki/client.p12" --password wrong && grep -q "wrong password" "$out/stderr"
then ok "$name"; else bad "$name"; fi

name="usage errors exit 2: two kinds of auth, no payload, two payload sources, a bad push type, no topic"
if run 2 "${common[@]}" --cert "$pki/client.pem" --topic t --token "$t1" --body x && grep -q "exclude each other" "$out/stderr" \
   && run 2 "${common[@]}" --topic com.example.app --token "$t1" && grep -q "no payload" "$out/stderr" \
   && run 2 "${common[@]}" --topic com.example.app --token "$t1" --body x --payload - && grep -q "one payload source" "$out/stderr" \
   && run 2 "${common[@]}" --topic com.example.app --token "$t1" --body x --push-type nope && grep -q "push-type must be one of" "$out/stderr" \
   && run 2 "${common[@]}" --token "$t1" --body x && grep -q "missing --topic" "$out/stderr" \
   && run 2 "${common[@]}" --topic com.example.app --token "$t1" --custom 'aps={}' && grep -q '"aps" is not allowed' "$out/stderr"
then ok "$name"; else bad "$name"; fi

name="no server listening: a connection error, exit 1"
if run 1 --host localhost --port 1 --ca-file "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 \
     --team-id TEAM123456 --topic com.example.app --token "$t1" --body x --timeout 2 \
   && grep -q "swiftpush send: " "$out/stderr"
then ok "$name"; else bad "$name"; fi

name="--help lists the send options"
if run 0 --help && grep -q -- "--tokens-file <FILE>" "$out/stdout" && grep -q -- "--apns-file <FILE>" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="-v prints the library's log events to stderr (connection ready, no secrets), --debug adds each attempt"
if run 0 "${common[@]}" --topic com.example.app --token "$t1" --title "Hi" -v \
   && grep -q "^swiftpush: INFO connection.ready: connection to localhost:$port ready" "$out/stderr" \
   && ! grep -q "connection.connecting" "$out/stderr" && ! grep -q -e "$t1" -e bearer "$out/stderr" \
   && run 0 "${common[@]}" --topic com.example.app --token "$t1" --title "Hi" --verbose --debug \
   && grep -q "^swiftpush: DEBUG connection.connecting: connecting to localhost:$port" "$out/stderr" \
   && run 0 "${common[@]}" --topic com.example.app --token "$t1" --title "Hi" && [ ! -s "$out/stderr" ]
then ok "$name"; else bad "$name"; fi

name="bench against a mock of its own: all accepted, the machine-readable last line"
if "$cli" bench --pki "$pki" --count 3000 --window 1000 > "$out/stdout" 2> "$out/stderr" \
   && grep -q "^outcomes: 3000 accepted, 0 rejected, 0 failed$" "$out/stdout" \
   && tail -1 "$out/stdout" | grep -qE '^swiftpush-bench rate=[0-9]+ cpu_us_per_notification=[0-9.]+ peak_rss_mb=[0-9.]+$'
then ok "$name"; else bad "$name"; fi

name="bench --help and a usage error"
if "$cli" bench --help > "$out/stdout" 2>&1 && grep -q -- "--h2load" "$out/stdout" \
   && ! "$cli" bench --count 10 > "$out/stdout" 2> "$out/stderr" && grep -q "give --pki" "$out/stderr"
then ok "$name"; else bad "$name"; fi

name="completions: path options complete as files or directories (zsh: _files, _files -/; bash: file completion)"
if "$cli" --generate-completion-script zsh > "$out/stdout" 2> "$out/stderr" \
   && grep -q -- "--ca-file\[.*\]:FILE:_files'" "$out/stdout" && grep -q -- "--tokens-file\[.*\]:FILE:_files'" "$out/stdout" \
   && grep -q -- "--pki\[.*\]:DIR:_files -/'" "$out/stdout" && grep -q -- "--config\[.*\]:FILE:_files'" "$out/stdout" \
   && "$cli" --generate-completion-script bash > "$out/stdout" 2> "$out/stderr" \
   && grep -A3 -- "'--ca-file')" "$out/stdout" | grep -q "add_completions -f$"
then ok "$name"; else bad "$name"; fi

name="send --tokens-file: a progress line on a terminal's stderr (a pty) for 6000 tokens, none with --quiet, for 2 tokens, or in a file"
if python3 Tests/cli/progress.py "$cli" "$port" "$pki" "$out" > "$out/stdout" 2> "$out/stderr"
then ok "$name"; else bad "$name"; fi

# --- Issue 30, items 6, 7 and 9: bad token lines, the .p12 password's sources, the mock's token
# check, the worker's configuration checks (--check-config, unknown keys) and --redis-config's.
name="--tokens-file: a line that is no token is INVALID with its line number, the rest is sent, exit 3 (text and --json)"
printf '%s\nzz\n\n# comment\n%s\n' "$t1" "$t2" > "$out/mixed.txt"
if run 3 "${common[@]}" --topic com.example.app --tokens-file "$out/mixed.txt" --body x \
   && grep -qx "zz INVALID 0 BadDeviceToken line=2 (device token has a non-hex character at offset 0)" "$out/stdout" \
   && [ "$(lines " ACCEPTED 200 ")" -eq 2 ] \
   && grep -qx "2 notifications: 2 accepted, 0 rejected, 0 failed, 1 invalid line" "$out/stdout" \
   && run 3 "${common[@]}" --topic com.example.app --tokens-file "$out/mixed.txt" --body x --json \
   && python3 - "$out/stdout" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
bad = [r for r in rows if r.get("outcome") == "INVALID"]
assert bad == [{"token": "zz", "outcome": "INVALID", "status": 0, "reason": "BadDeviceToken", "line": 2,
                "detail": "device token has a non-hex character at offset 0"}], bad
assert sum(r.get("outcome") == "ACCEPTED" for r in rows) == 2, rows
assert rows[-1] == {"summary": {"total": 2, "accepted": 2, "rejected": 0, "failed": 0, "invalid": 1}}, rows[-1]
PY
then ok "$name"; else bad "$name"; fi

name="--tokens-file --strict: a bad line stops the run before anything is sent, exit 2, the line named"
if run 2 "${common[@]}" --topic com.example.app --tokens-file "$out/mixed.txt" --body x --strict \
   && grep -q "invalid device token 'zz' on line 2 of $out/mixed.txt: device token has a non-hex character" "$out/stderr" \
   && [ ! -s "$out/stdout" ]
then ok "$name"; else bad "$name"; fi

name="the mock answers a 2-byte device token 400 BadDeviceToken, as APNs does: REJECTED, exit 1"
if run 1 "${common[@]}" --topic com.example.app --token abcd --body x \
   && grep -q "^abcd REJECTED 400 BadDeviceToken apns-id=" "$out/stdout"
then ok "$name"; else bad "$name"; fi

name="the .p12 password from --password-file and --password-env (not on the command line); one source only"
printf 'secret\n' > "$out/p12.pass"
export SWIFTPUSH_TEST_P12_PASSWORD=secret
if run 0 "${cert_common[@]}" --p12 "$pki/client.p12" --password-file "$out/p12.pass" && grep -q "^$t1 ACCEPTED" "$out/stdout" \
   && run 0 "${cert_common[@]}" --p12 "$pki/client.p12" --password-env SWIFTPUSH_TEST_P12_PASSWORD && grep -q "^$t1 ACCEPTED" "$out/stdout" \
   && run 2 "${cert_common[@]}" --p12 "$pki/client.p12" --password-env SWIFTPUSH_TEST_NO_SUCH_VARIABLE \
   && grep -q "SWIFTPUSH_TEST_NO_SUCH_VARIABLE (the .p12 password) is not set" "$out/stderr" \
   && run 2 "${cert_common[@]}" --p12 "$pki/client.p12" --password-file "$out/no-such.pass" && grep -q "cannot read the .p12 password file" "$out/stderr" \
   && run 2 "${cert_common[@]}" --p12 "$pki/client.p12" --password secret --password-file "$out/p12.pass" && grep -q "give one of --password" "$out/stderr"
then ok "$name"; else bad "$name"; fi
unset SWIFTPUSH_TEST_P12_PASSWORD

name="the .p12 password from --password-prompt, typed on a terminal (a pty)"
if python3 Tests/cli/password_prompt.py "$cli" "$cert_port" "$pki" > "$out/stdout" 2> "$out/stderr"
then ok "$name"; else bad "$name"; fi

# worker --check-config: everything checked, nothing connected (Redis and APNs on port 1, where
# nothing listens: a connection attempt would fail the check).
worker_app='"key_file": "'$pki'/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456", "host": "localhost", "port": 1'
check_config() { # EXPECTED_STATUS JSON: writes JSON to a file and runs worker --check-config on it
  printf '%s\n' "$2" > "$out/check.json"
  local status=0
  "$cli" worker --check-config "$out/check.json" > "$out/stdout" 2> "$out/stderr" || status=$?
  [ "$status" -eq "$1" ] || { echo "    exit status $status, expected $1"; return 1; }
}
name="worker --check-config: a valid file (table options on its app) exits 0 without connecting; each mistake exits 2 with the reason"
if check_config 0 '{"redis": {"port": 1}, "apps": {"demo": {'"$worker_app"', "max_streams": 10, "connections": 3, "retry_delay_ms": 200}}}' \
   && grep -q "check.json: valid (1 app, shards 0, Redis at " "$out/stdout" \
   && check_config 2 '{"apps": {"demo": {'"$worker_app"', "max_stream": 10}}}' \
   && grep -q "unknown key apps.demo.max_stream (did you mean max_streams?)" "$out/stderr" \
   && check_config 2 '{"max_inflight": 10, "apps": {"demo": {'"$worker_app"'}}}' \
   && grep -q "unknown key max_inflight (did you mean max_in_flight?)" "$out/stderr" \
   && check_config 2 '{"redis": {"pasword_file": "f"}, "apps": {"demo": {'"$worker_app"'}}}' \
   && grep -q "unknown key redis.pasword_file (did you mean password_file?)" "$out/stderr" \
   && check_config 2 $'{\n  "apps": {"demo": {'"$worker_app"',}}\n}' && grep -q "check.json: not valid JSON: line 2, column " "$out/stderr" \
   && check_config 2 '{"apps": {"demo": {'"$worker_app"', "max_streams": 0}}}' \
   && grep -q 'app "demo": max_streams must be in 1...100000, got 0' "$out/stderr" \
   && check_config 2 '{"apps": {"demo": {"key_file": "'$out'/missing.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456"}}}' \
   && grep -q 'app "demo": key_file: cannot read key file' "$out/stderr" \
   && check_config 2 '{"redis": {"password_env": "SWIFTPUSH_TEST_NO_SUCH_VARIABLE"}, "apps": {"demo": {'"$worker_app"'}}}' \
   && grep -q "SWIFTPUSH_TEST_NO_SUCH_VARIABLE" "$out/stderr" \
   && ! "$cli" worker > /dev/null 2> "$out/stderr" && grep -q "give --config FILE (run) or --check-config FILE" "$out/stderr"
then ok "$name"; else bad "$name"; fi

name="--redis-config follows the same rule: unknown keys named with the nearest one, JSON errors with line and column"
printf '{"redis": {"pasword_file": "f"}}\n' > "$out/redis-typo.json"
printf '{"rdis": {}}\n' > "$out/redis-top.json"
printf '{\n "redis": {"port": 6379,}\n}\n' > "$out/redis-bad.json"
status=0; "$cli" outcomes --redis-config "$out/redis-typo.json" > "$out/stdout" 2> "$out/stderr" || status=$?
if [ "$status" -eq 2 ] && grep -q "unknown key redis.pasword_file (did you mean password_file?)" "$out/stderr" \
   && ! "$cli" outcomes --redis-config "$out/redis-top.json" > "$out/stdout" 2> "$out/stderr" \
   && grep -q "unknown key rdis (did you mean redis?)" "$out/stderr" \
   && ! "$cli" outcomes --redis-config "$out/redis-bad.json" > "$out/stdout" 2> "$out/stderr" \
   && grep -q "redis-bad.json: not valid JSON: line 2, column 25" "$out/stderr"
then ok "$name"; else bad "$name"; fi

name="the man page: NAME, SYNOPSIS, DESCRIPTION per command, EXAMPLES, ENVIRONMENT, FILES, EXIT STATUS; it renders"
if bash Tests/cli/manpage.sh "$cli" > "$out/stdout" 2> "$out/stderr"
then ok "$name"; else bad "$name"; fi

name="--version prints the release's version (the file VERSION) and exits 0"
if "$cli" --version > "$out/stdout" 2> "$out/stderr" && [ "$(cat "$out/stdout")" = "$(cat VERSION)" ] && [ ! -s "$out/stderr" ]
then ok "$name"; else bad "$name"; fi

name="a negative --timeout is a value, refused as not positive (not \"Missing value\"): channels and send"
status=0; "$cli" channels list --bundle-id com.example.app --timeout -1 > "$out/stdout" 2> "$out/stderr" || status=$?
status2=0; "$cli" send "${common[@]}" --topic com.example.app --token "$t1" --title Hi --timeout -5 > "$out/stdout2" 2> "$out/stderr2" || status2=$?
if [ "$status" -eq 2 ] && grep -q "timeout must be positive (1...86400), got '-1'" "$out/stderr" \
   && ! grep -qi "missing value" "$out/stderr" && [ "$status2" -eq 2 ] && grep -q "timeout must be positive" "$out/stderr2"
then ok "$name"; else cat "$out/stderr2" >> "$out/stderr"; bad "$name"; fi

echo "cli: $pass passed, $fail failed"
# Broadcast push: channels and send --channel, against a mock with a management listener.
bash Tests/cli/broadcast.sh "$build" || fail=$((fail + 1))
[ "$fail" -eq 0 ]
