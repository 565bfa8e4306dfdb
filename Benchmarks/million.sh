#!/usr/bin/env bash
# A vault of SIZE logins (1,000,000 by default), whole processes (issues 33 and 58), each figure
# beside its comparison and with its peak memory: import (and the rate at which this file system
# creates the same number of files), fill (beside a fill of a 1,000-entry vault), list warm and
# the first after a change, Tab completion warm and the first after a change, an export to CSV,
# verify (beside reading every file of the container), the first sync to a bare repository (beside `git add -A
# && git commit && git push` of the same tree) and a later sync of 100 changed records. Each step
# is timed in proportion to its cost (hyperfine for the fast ones, once for the slow ones).
#
#   Benchmarks/million.sh COFFER WORKDIR [SIZE]
#
# Prints one JSON object. Needs git, hyperfine and python3; unlocks through the kernel keyring.
set -euo pipefail
coffer=$1; work=$2; size=${3:-1000000}
master="benchmark master"
export HOME="$work" XDG_STATE_HOME="$work/million-state"
median_ms() {  # median_ms RUNS COMMAND
    rm -f "$work/million-h.json"
    hyperfine -N --warmup 2 --runs "$1" --export-json "$work/million-h.json" "$2" >/dev/null 2>&1 || { echo null; return; }
    python3 -c "import json;print(round(json.load(open('$work/million-h.json'))['results'][0]['median']*1000,2))"
}
# timed NAME COMMAND…: runs it once; sets NAME_seconds and NAME_kib (peak resident memory).
timed() {
    local name=$1; shift
    /usr/bin/time -f "%e %M" -o "$work/million-time" "$@" >/dev/null 2>&1 </dev/null || true
    read -r elapsed kib < "$work/million-time"
    printf -v "${name}_seconds" '%s' "$elapsed"; printf -v "${name}_kib" '%s' "$kib"
}
vault() {  # vault NAME ENTRIES: a vault of one-URL logins, made through the bulk import
    export COFFER_CONTAINER="$work/million-$1"
    printf '%s\n' "$master" | "$coffer" init --kdf interactive --password-stdin >/dev/null 2>&1
    printf '%s\n' "$master" | "$coffer" unlock --password-stdin --timeout 1h >/dev/null 2>&1
    python3 - "$2" > "$work/million-$1.csv" <<'PY'
import sys
print("name,url,username,password,note")
for i in range(int(sys.argv[1])):
    print(f"site{i},https://site{i}.com/login,user{i}@example.com,password-{i}-xyzzy,")
PY
    timed import "$coffer" import "$work/million-$1.csv"
    rm -f "$work/million-$1.csv"
}
edit_some() {  # edit_some COUNT FIRST: COUNT logins get a tag, one process
    for ((i = $2; i < $2 + $1; i++)); do "$coffer" edit "site$i.com" --tag changed >/dev/null 2>&1; done
}

vault small 1000
vault large "$size"
large_import=$import_seconds; large_import_kib=$import_kib
# The same number of files created by a plain program, in 256 directories, for comparison.
files_per_second=$(python3 - "$size" "$work/million-files" <<'PY'
import os, sys, time
n, root = int(sys.argv[1]), sys.argv[2]
for i in range(256): os.makedirs(f"{root}/{i:02x}")
data, start = os.urandom(560), time.time()
for i in range(n):
    name = os.urandom(16).hex()
    fd = os.open(f"{root}/{name[:2]}/{name}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, data); os.close(fd)
os.sync()
print(int(n / (time.time() - start)))
PY
)
rm -rf "$work/million-files"
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
timed list_built "$coffer" list  # no snapshot yet: every bucket read
list=$(median_ms 10 "$coffer list")
timed list_warm "$coffer" list
json_peak_kib=$(/usr/bin/time -f %M "$coffer" list --json 2>&1 >/dev/null | tail -1)
json=$(median_ms 3 "$coffer list --json")
edit_some 1 10; timed list_first "$coffer" list
"$coffer" __complete entry site12345 >/dev/null
completion=$(median_ms 20 "$coffer __complete entry site12345")
timed completion_warm "$coffer" __complete entry site12345
edit_some 1 20; timed completion_first "$coffer" __complete entry site12345
timed export "$coffer" export --format csv --plaintext  # two passes, a records/<xx> directory at a time
timed read_all sh -c "find '$work/million-large' -type f -print0 | xargs -0 cat"
timed verify "$coffer" verify
# The first sync beside git alone on a copy of the same tree.
cp -a "$work/million-large" "$work/million-git"
git init -q --bare -b main "$work/million-git.git"
# (gc and maintenance off: git would start them detached, after the figure, and they would run
# on during the figures that follow.) Its peak memory is its largest process's (git's
# pack-objects for the push): what any sync through git needs on this tree.
timed git_alone sh -c "cd '$work/million-git' && git init -q -b main && git config gc.auto 0 && git config maintenance.auto false &&
    git -c core.compression=0 add -A && git -c user.name=b -c user.email=b@b commit -qm all &&
    git push -q '$work/million-git.git' main"
git_seconds=$git_alone_seconds
rm -rf "$work/million-git" "$work/million-git.git"
git init -q --bare -b main "$work/million-remote.git"
"$coffer" sync remote "$work/million-remote.git" >/dev/null 2>&1
timed first_sync "$coffer" sync
edit_some 100 100
timed sync_status "$coffer" sync status  # 100 changed files, counted from the baseline
timed later_sync "$coffer" sync
timed list_after_sync "$coffer" list  # the first after those 100 edits: about 140 of 256 buckets merged
"$coffer" lock >/dev/null 2>&1 || true
rm -rf "$work/million-large" "$work/million-remote.git"

python3 - <<PY
import json
size, fill, small, version = $size, $fill, $small_fill, $version
mib = lambda kib: round(int(kib) / 1024, 1)
print(json.dumps({"case": "million", "size": size,
                  "importSeconds": $large_import, "importPerSecond": int(size / $large_import), "importPeakMiB": mib($large_import_kib),
                  "filesCreatedPerSecond": $files_per_second,
                  "fillMs": fill, "smallVaultFillMs": small, "fillRatio": round(fill / small, 2),
                  "versionMs": version, "fillVsNoOp": round(fill / version, 2),
                  "listBuiltSeconds": $list_built_seconds, "listBuiltPeakMiB": mib($list_built_kib),
                  "listMs": $list, "listPeakMiB": mib($list_warm_kib),
                  "listFirstAfterChangeSeconds": $list_first_seconds, "listFirstAfterChangePeakMiB": mib($list_first_kib),
                  "listJsonMs": $json, "listJsonPeakMiB": mib($json_peak_kib),
                  "completionMs": $completion, "completionPeakMiB": mib($completion_warm_kib),
                  "completionFirstAfterChangeSeconds": $completion_first_seconds, "completionFirstAfterChangePeakMiB": mib($completion_first_kib),
                  "verifySeconds": $verify_seconds, "verifyPeakMiB": mib($verify_kib), "readEveryFileSeconds": $read_all_seconds,
                  "verifyVsReading": round($verify_seconds / $read_all_seconds, 2),
                  "exportCsvSeconds": $export_seconds, "exportCsvPeakMiB": mib($export_kib),
                  "firstSyncSeconds": $first_sync_seconds, "firstSyncPeakMiB": mib($first_sync_kib), "gitAddCommitPushSeconds": $git_seconds, "gitAddCommitPushPeakMiB": mib($git_alone_kib),
                  "firstSyncVsGit": round($first_sync_seconds / $git_seconds, 2),
                  "syncStatusSeconds": $sync_status_seconds, "syncStatusPeakMiB": mib($sync_status_kib),
                  "laterSyncOf100Seconds": $later_sync_seconds, "laterSyncPeakMiB": mib($later_sync_kib),
                  "listFirstAfter100EditsSeconds": $list_after_sync_seconds, "listFirstAfter100EditsPeakMiB": mib($list_after_sync_kib)}))
PY
