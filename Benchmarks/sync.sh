#!/usr/bin/env bash
# coffer sync (issue 21), whole processes: a vault of SIZE logins on device A, cloned to device
# B through a bare repository; each round A edits 50 records and adds 50, and syncs; then B's
# sync of those 100 changes is timed and split into git's time and Coffer's own (target: Coffer's
# own ≤ 1 s). Also fill in A's container before and after it became a repository (target: no
# slower), and the first sync and the clone of the whole vault.
#
#   Benchmarks/sync.sh COFFER WORKDIR [SIZE] [ROUNDS]
#
# Prints one JSON object. Needs git and python3; unlocks through the kernel keyring.
set -euo pipefail
coffer=$1; work=$2; size=${3:-10000}; rounds=${4:-5}
master="benchmark master"
remote="$work/sync-remote.git"
export HOME="$work"
git init -q --bare -b main "$remote"

device() { export XDG_STATE_HOME="$work/sync-state-$1" COFFER_CONTAINER="$work/sync-$1"; }
seconds() { python3 -c "import time; print(time.time())"; }
fill_ms() {  # median of 30 fills, in ms
    python3 - "$coffer" "$1" <<'PY'
import statistics, subprocess, sys, time
times = []
for _ in range(30):
    start = time.perf_counter()
    subprocess.run([sys.argv[1], "fill", sys.argv[2], "--no-interaction"], check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - start)
print(round(statistics.median(times) * 1000, 2))
PY
}

device a
printf '%s\n' "$master" | "$coffer" init --kdf interactive --password-stdin 2>/dev/null
python3 - "$size" > "$work/sync-import.csv" <<'PY'
import sys
print("name,url,username,password,note")
for i in range(int(sys.argv[1])):
    print(f"site{i},https://site{i}.com/login,user{i}@example.com,password-{i}-xyzzy,")
PY
printf '%s\n' "$master" | "$coffer" import "$work/sync-import.csv" --password-stdin 2>/dev/null
printf '%s\n' "$master" | "$coffer" unlock --password-stdin --timeout 1h 2>/dev/null
target="https://site$((size / 2)).com/login"
fill_before=$(fill_ms "$target")
"$coffer" sync remote "$remote" 2>/dev/null
start=$(seconds); "$coffer" sync 2>/dev/null; first_sync=$(python3 -c "print(round($(seconds) - $start, 2))")
fill_after=$(fill_ms "$target")

device b
start=$(seconds)
printf '%s\n' "$master" | "$coffer" clone "$remote" --password-stdin 2>/dev/null
clone=$(python3 -c "print(round($(seconds) - $start, 2))")

results=()
for round in $(seq "$rounds"); do
    device a
    for i in $(seq 0 49); do "$coffer" edit "site$(( (round * 50 + i) * 7 % size ))" --user "changed-$round-$i" >/dev/null 2>&1; done
    python3 - "$round" > "$work/sync-add.csv" <<'PY'
import sys
print("name,url,username,password,note")
for i in range(50):
    print(f"new{sys.argv[1]}-{i},https://new{sys.argv[1]}-{i}.example/,someone,pw-{i},")
PY
    "$coffer" import "$work/sync-add.csv" >/dev/null 2>&1
    "$coffer" sync >/dev/null 2>&1
    device b
    results+=("$("$coffer" sync --json 2>/dev/null)")
done
python3 - "$first_sync" "$clone" "$fill_before" "$fill_after" "${results[@]}" <<'PY'
import json, statistics, sys
first, clone, before, after = sys.argv[1:5]
reports = [json.loads(r) for r in sys.argv[5:]]
assert all(r["incoming"]["added"] == 50 and r["incoming"]["updated"] == 50 for r in reports), reports
total = statistics.median(r["totalSeconds"] for r in reports)
git = statistics.median(r["gitSeconds"] for r in reports)
own = statistics.median(r["totalSeconds"] - r["gitSeconds"] for r in reports)
print(json.dumps({"case": "sync", "changes": 100, "syncSeconds": round(total, 3), "gitSeconds": round(git, 3),
                  "ownSeconds": round(own, 3), "firstSyncSeconds": float(first), "cloneSeconds": float(clone),
                  "fillBeforeMs": float(before), "fillAfterMs": float(after)}))
PY
