#!/bin/bash
# Runs COMMAND where a real polkitd answers Coffer's action with a rule of ours, on a private
# system bus, inside the caller's private mount namespace (nothing of the machine's polkit or
# system bus is touched):
#
#   unshare -m --propagation private Tests/Helpers/polkit_session.sh yes|no|auth_self COMMAND…
#
# yes and no answer at once; auth_self asks an authentication agent, and none is registered (the
# "nobody could answer" case). Coffer reaches the bus through DBUS_SYSTEM_BUS_ADDRESS.
set -euo pipefail
result=$1; shift
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
chmod 755 "$work"  # polkitd reads the rules as its own user, polkitd
polkit_pid=""
cleanup() {
    [ -z "$polkit_pid" ] || kill "$polkit_pid" 2>/dev/null || true
    [ ! -f "$work/bus.pid" ] || kill "$(cat "$work/bus.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/actions" "$work/rules" "$work/etc-rules"
cp "$here/contrib/polkit/org.coffer.unlock.policy" "$work/actions/"
case "$result" in
    yes) answer=YES ;; no) answer=NO ;; auth_self) answer=AUTH_SELF ;;
    *) echo "polkit_session.sh: yes, no or auth_self, not $result" >&2; exit 64 ;;
esac
printf 'polkit.addRule(function(action, subject) {\n    if (action.id == "org.coffer.unlock") { return polkit.Result.%s; }\n});\n' "$answer" \
    > "$work/rules/50-coffer-test.rules"
cat > "$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$work/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
mount --bind "$work/actions" /usr/share/polkit-1/actions
mount --bind "$work/rules" /usr/share/polkit-1/rules.d
[ ! -d /etc/polkit-1/rules.d ] || mount --bind "$work/etc-rules" /etc/polkit-1/rules.d
dbus-daemon --config-file="$work/bus.conf" --fork --print-pid > "$work/bus.pid"
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/system_bus_socket"
/usr/lib/polkit-1/polkitd --no-debug </dev/null >"$work/polkitd.log" 2>&1 &
polkit_pid=$!
for _ in $(seq 100); do
    if dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.PolicyKit1 2>/dev/null \
        | grep -q 'boolean true'; then
        break
    fi
    sleep 0.1
done
"$@"
