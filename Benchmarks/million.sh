#!/usr/bin/env bash
# A vault of SIZE logins (1,000,000 by default), whole processes (issue 33): import, fill (its
# ratio to a fill of a 1,000-entry vault built the same way, target ≤ 1.5×), list, list --json
# (peak memory), Tab completion, verify, and the first sync to a bare repository. Each step is
# timed in proportion to its cost (hyperfine for the fast ones, once for the slow ones) so the
# whole run stays inside 15 minutes on the 2-core machine.
#
#   Benchmarks/million.sh COFFER WORKDIR [SIZE]
#
# Prints one JSON object. Needs git, hyperfine and python3; unlocks through the kernel keyring.
set -euo pipefail
coffer=$1; work=$2; size=${3:-1000000}
master="benchmark master"
export HOME="$work" XDG_STATE_HOME="$work/million-state"
seconds() { python3 -c "import time; print(time.time())"; }
since() { python3 -c "print(round($(seconds) - $1, 2))"; }
median_ms() {  # median_ms RUNS COMMAND
    rm -f "$work/million-h.json"
    hyperfine -N --warmup 2 --runs "$1" --export-json "$work/million-h.json" "$2" >/dev/null 2>&1 || { echo null; return; }
    python3 -c "import json;print(round(json.load(open('$work/million-h.json'))['results'][0]['median']*1000,2))"
}
vault() {  # vault NAME ENTRIES: a vault of one-URL logins, made through the bulk import
    export COFFER_CONTAINER="$work/million-$1"
    printf '%s\n' "$master" | "$coffer" init --kdf interactive --password-stdin >/dev/null 2>&1
    python3 - "$2" > "$work/million-$1.csv" <<'PY'
import sys
print("name,url,username,password,note")
for i in range(int(sys.argv[1])):
    print(f"site{i},https://site{i}.com/login,user{i}@example.com,password-{i}-xyzzy,")
PY
    local start; start=$(seconds)
    printf '%s\n' "$master" | "$coffer" import "$work/million-$1.csv" --password-stdin >/dev/null 2>&1
    import_seconds=$(since "$start")
    rm -f "$work/million-$1.csv"
    printf '%s\n' "$master" | "$coffer" unlock --password-stdin --timeout 1h >/dev/null 2>&1
}

vault small 1000
vault large "$size"
large_import=$import_seconds
target="https://site$((size / 2)).com/login"
"$coffer" fill "$target" --no-interaction >/dev/null  # the first lookup of its bucket cuts the parts (SPEC.md §7.6)
sync; sleep 5  # the import's gigabytes written back first: they slowed every later figure by a third
# The two fills and the no-op back to back, so they share the machine's state.
rm -f "$work/million-h.json"
hyperfine -N --warmup 5 --runs 50 --export-json "$work/million-h.json" \
    "$coffer --container $work/million-small fill https://site500.com/login --no-interaction" \
    "$coffer --container $work/million-large fill $target --no-interaction" "$coffer --version" >/dev/null 2>&1
read -r small_fill fill version < <(python3 -c "
import json; print(*[round(r['median'] * 1000, 2) for r in json.load(open('$work/million-h.json'))['results']])")
start=$(seconds); "$coffer" list >/dev/null; list_first=$(since "$start")
list=$(median_ms 5 "$coffer list")
json_peak_kib=$(/usr/bin/time -f %M "$coffer" list --json 2>&1 >/dev/null | tail -1)
json=$(median_ms 3 "$coffer list --json")
"$coffer" lock >/dev/null 2>&1
start=$(seconds); "$coffer" __complete entry site12345 >/dev/null; completion_first=$(since "$start")
completion=$(median_ms 10 "$coffer __complete entry site12345")
printf '%s\n' "$master" | "$coffer" unlock --password-stdin --timeout 1h >/dev/null 2>&1
start=$(seconds); "$coffer" verify >/dev/null 2>&1; verify=$(since "$start")
git init -q --bare -b main "$work/million-remote.git"
"$coffer" sync remote "$work/million-remote.git" >/dev/null 2>&1
start=$(seconds); "$coffer" sync >/dev/null 2>&1; first_sync=$(since "$start")
"$coffer" lock >/dev/null 2>&1 || true
rm -rf "$work/million-large" "$work/million-remote.git"

python3 - <<PY
import json
size, fill, small, version = $size, $fill, $small_fill, $version
print(json.dumps({"case": "million", "size": size, "importSeconds": $large_import, "importPerSecond": int(size / $large_import),
                  "fillMs": fill, "smallVaultFillMs": small, "fillRatio": round(fill / small, 2),
                  "versionMs": version, "fillVsNoOp": round(fill / version, 2),
                  "listMs": $list, "listFirstSeconds": $list_first, "listJsonMs": $json, "listJsonPeakKiB": $json_peak_kib,
                  "completionMs": $completion, "completionFirstSeconds": $completion_first,
                  "verifySeconds": $verify, "firstSyncSeconds": $first_sync}))
PY
