#!/usr/bin/env bash
# Team vaults (issue 32), whole processes: alice founds a team on a bare repository and imports
# SIZE logins into it, bob joins. Measured: a fill of a team login beside a fill of a personal
# login in a vault of the same size (target ≤ 1.2×), both through `TEAM:` and through one's own
# list (the personal miss first); `team add` (target: no record re-sealed — the records' bytes
# are compared); `team remove` of a member, the rotation that re-seals every record, whole
# process with its syncs (target ≤ 2 s); bob's sync that takes the rotation.
#
#   Benchmarks/teams.sh COFFER WORKDIR [SIZE] [RUNS]
#
# Prints one JSON object. Needs git, python3 and hyperfine; unlocks through the kernel keyring.
set -euo pipefail
coffer=$1; work=$2; size=${3:-1000}; runs=${4:-30}
remote="$work/teams-remote.git"
git init -q --bare -b main "$remote"

person() { export HOME="$work/teams-$1" XDG_STATE_HOME="$work/teams-$1/state" XDG_DATA_HOME="$work/teams-$1/data" USER=$1; unset COFFER_CONTAINER; }
master() { printf 'master of %s\n' "$1"; }
seconds() { python3 -c "import time; print(time.time())"; }
median_ms() {
    rm -f "$work/teams-h.json"
    hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/teams-h.json" "$1" >/dev/null 2>&1 || { echo failed; return; }
    python3 -c "import json;print(round(json.load(open('$work/teams-h.json'))['results'][0]['median']*1000,2))"
}
records_digest() { (cd "$1" && find records -type f | sort | xargs cat | sha256sum | cut -c1-16); }

python3 - "$size" > "$work/teams-import.csv" <<'PY'
import sys
print("name,url,username,password,note")
for i in range(int(sys.argv[1])):
    print(f"site{i},https://site{i}.com/login,user{i}@example.com,password-{i}-xyzzy,")
PY
python3 - "$size" > "$work/teams-personal.csv" <<'PY'
import sys
print("name,url,username,password,note")
for i in range(int(sys.argv[1])):
    print(f"own{i},https://own{i}.com/login,user{i}@example.com,password-{i}-xyzzy,")
PY

for who in alice bob carol; do
    person $who; mkdir -p "$HOME"
    master $who | "$coffer" init --kdf interactive --password-stdin >/dev/null 2>&1
done
person bob; bob=$("$coffer" whoami --password-stdin < <(master bob) 2>/dev/null)
person carol; carol=$("$coffer" whoami --password-stdin < <(master carol) 2>/dev/null)
person alice
master alice | "$coffer" import "$work/teams-personal.csv" --password-stdin >/dev/null 2>&1
master alice | "$coffer" team create ops --remote "$remote" --password-stdin >/dev/null 2>&1
master alice | "$coffer" --group team.ops import "$work/teams-import.csv" --password-stdin >/dev/null 2>&1
master alice | "$coffer" team add ops "$carol" --as carol --password-stdin >/dev/null 2>&1
master alice | "$coffer" unlock --timeout 1h --password-stdin >/dev/null 2>&1
team="$XDG_DATA_HOME/coffer/group-containers/team.ops"
founder=$("$coffer" whoami --json | python3 -c "import json,sys; print(json.load(sys.stdin)['fingerprint'])")

target=$((size / 2))
personal_fill=$(median_ms "$coffer fill own$target.com --no-interaction")
team_fill=$(median_ms "$coffer fill ops:site$target.com --no-interaction")
team_fill_own_list=$(median_ms "$coffer fill site$target.com --no-interaction")

before=$(records_digest "$team")
start=$(seconds); "$coffer" team add ops "$bob" --as bob >/dev/null 2>&1; add_s=$(python3 -c "print(round($(seconds) - $start, 2))")
after=$(records_digest "$team")
resealed_on_add=$([ "$before" = "$after" ] && echo false || echo true)

person bob
master bob | "$coffer" team join "$remote" --founder "$founder" --password-stdin >/dev/null 2>&1

person alice
start=$(seconds); "$coffer" team remove ops carol >/dev/null 2>&1; remove_s=$(python3 -c "print(round($(seconds) - $start, 2))")
[ "$(records_digest "$team")" != "$after" ] && resealed_on_remove=true || resealed_on_remove=false

person bob
start=$(seconds); master bob | "$coffer" team sync --password-stdin >/dev/null 2>&1; bob_sync_s=$(python3 -c "print(round($(seconds) - $start, 2))")
bob_fill=$(master bob | "$coffer" fill "site$target.com" --password-stdin 2>/dev/null)
"$coffer" lock >/dev/null 2>&1 || true
person alice; "$coffer" lock >/dev/null 2>&1 || true

python3 - <<PY
import json
print(json.dumps({"case": "teams", "size": $size, "personalFillMs": "$personal_fill", "teamFillMs": "$team_fill",
    "teamFillThroughOwnListMs": "$team_fill_own_list", "addMemberSeconds": $add_s, "recordsResealedByAdd": "$resealed_on_add" == "true",
    "removeMemberSeconds": $remove_s, "recordsResealedByRemove": "$resealed_on_remove" == "true", "memberSyncOfRotationSeconds": $bob_sync_s,
    "memberFillsAfterRotation": "$bob_fill" == "password-$target-xyzzy"}))
PY
