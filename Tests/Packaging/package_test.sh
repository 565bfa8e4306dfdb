#!/usr/bin/env bash
# Builds the Debian package and checks it as a user would meet it: its fields and contents
# (dpkg-deb), lintian clean of errors (scripts/package fails otherwise), unpacked into a scratch
# root (dpkg -x) where the installed coffer runs; then scripts/install into a scratch prefix,
# its completions loaded by bash, and --uninstall taking away exactly what it put there.
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "package_test: FAIL: $*" >&2; exit 1; }
# Checks read a command's whole output (grep without -q): under pipefail, `grep -q` quitting
# at the first match made the writer die of SIGPIPE now and then, and the check fail.

deb=$(scripts/package --output "$scratch/dist" --fast | tail -1)
[ -f "$deb" ] || fail "no package"
xpi=$(ls "$scratch"/dist/coffer-*.xpi 2>/dev/null | head -1)
[ -n "$xpi" ] || fail "no .xpi for Firefox"
xpi_files=$(python3 -m zipfile -l "$xpi")
for file in manifest.json background.js content.js fields.js checkout-fields.js passkeys.js webauthn-page.js popup.html insert.html insert.js vault.html vault-first-page.js vault.js vault-list.js vault-item.js vault-edit.js vault-audit.js vault-lock.js vault.css; do
    grep -w -- "$file" <<< "$xpi_files" >/dev/null || fail "$file missing from the .xpi"
done
case "$(basename "$deb")" in coffer_*_"$(dpkg --print-architecture)".deb) ;; *) fail "name $(basename "$deb")" ;; esac
[ "$(dpkg-deb --field "$deb" Section)" = utils ] || fail "Section"
[ "$(dpkg-deb --field "$deb" Package)" = coffer ] || fail "Package"
dpkg-deb --field "$deb" Description | grep "password vault" >/dev/null || fail "Description"
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for path in ./usr/bin/coffer ./usr/bin/git-credential-coffer ./usr/bin/docker-credential-coffer ./usr/bin/coffer-browser-host \
            ./usr/share/man/man1/coffer.1.gz ./usr/share/doc/coffer/copyright ./usr/share/doc/coffer/changelog.gz \
            ./usr/share/bash-completion/completions/coffer ./usr/share/zsh/vendor-completions/_coffer \
            ./usr/share/fish/vendor_completions.d/coffer.fish ./etc/chromium/native-messaging-hosts/org.coffer.browser_host.json \
            ./usr/lib/systemd/user/coffer-ssh-agent.socket ./usr/lib/systemd/user/coffer-secret-service.service \
            ./usr/lib/systemd/user/coffer-agent.socket ./usr/lib/systemd/user/coffer-agent.service \
            ./usr/share/dbus-1/services/coffer-secret-service.service; do
    grep -qx -- "$path" <<< "$contents" || fail "$path missing from the package"
done
dpkg-deb --info "$deb" conffiles | grep -x /etc/chromium/native-messaging-hosts/org.coffer.browser_host.json >/dev/null || fail "conffiles"
# Depends is what the binaries load: nothing for static executables, and never libc by hand.
depends=$(dpkg-deb --field "$deb" Depends)
for program in usr/bin/coffer; do
    dpkg-deb --fsys-tarfile "$deb" | tar -xO "./$program" > "$scratch/probe"
    if objdump -p "$scratch/probe" 2>/dev/null | grep NEEDED >/dev/null; then [ -n "$depends" ] || fail "dynamic $program without Depends"; fi
done

dpkg -x "$deb" "$scratch/root"
# The credential helpers are small executables of their own: neither the CLI's commands nor
# D-Bus are linked into them (their targets do not depend on either; README, "What is where").
for helper in git-credential-coffer docker-credential-coffer; do
    text=$(strings "$scratch/root/usr/bin/$helper")
    if grep -F "org.freedesktop.DBus" <<< "$text" >/dev/null; then fail "$helper carries D-Bus"; fi
    if grep -F "change an item's name" <<< "$text" >/dev/null; then fail "$helper carries the CLI's commands"; fi
done
"$scratch/root/usr/bin/coffer" --version | grep "^coffer " >/dev/null || fail "installed coffer --version"
"$scratch/root/usr/bin/coffer" help | grep "ssh-agent" >/dev/null || fail "installed coffer help"
grep -qx 'Exec=/usr/bin/coffer secret-service' "$scratch/root/usr/share/dbus-1/services/coffer-secret-service.service" || fail "D-Bus activation Exec"
grep -q '"path":"/usr/bin/coffer-browser-host"' "$scratch/root/etc/chromium/native-messaging-hosts/org.coffer.browser_host.json" \
    || fail "host manifest path"
zcat "$scratch/root/usr/share/man/man1/coffer.1.gz" | grep '^\.TH' >/dev/null || fail "man page"
# The web's password rules ship beside the executable, and the installed coffer finds them there.
[ -s "$scratch/root/usr/share/coffer/web-quirks/LICENSE.md" ] || fail "web-quirks licence"
env -u COFFER_WEB_QUIRKS "$scratch/root/usr/bin/coffer" generate --for www.americanexpress.com --json \
    | grep '"rulesFrom":"americanexpress.com"' >/dev/null || fail "installed coffer does not find the web's password rules"

# scripts/install into a prefix (staged, so the machine's /etc is left alone), twice: idempotent.
# scripts/package above ran it as a person does, building first; here it installs the executables
# the package carries (--bin), which spares two builds with nothing to do (about 20 s).
scripts/install --prefix "$scratch/prefix" --destdir "$scratch/stage" --bin "$scratch/root/usr/bin" > /dev/null
scripts/install --prefix "$scratch/prefix" --destdir "$scratch/stage" --bin "$scratch/root/usr/bin" > /dev/null
[ "$(scripts/install --bin "$scratch/nowhere" --prefix "$scratch/prefix" --destdir "$scratch/stage" 2>&1 >/dev/null)" = "install: $scratch/nowhere/coffer is not an executable" ] \
    || fail "scripts/install --bin without executables"
installed=$scratch/stage$scratch/prefix
"$installed/bin/coffer" --version | grep "^coffer " >/dev/null || fail "scripts/install: coffer --version"
env -u COFFER_WEB_QUIRKS "$installed/bin/coffer" generate --for americanexpress.com --json | grep '"rulesFrom":"americanexpress.com"' >/dev/null \
    || fail "scripts/install: coffer does not find the web's password rules"
bash -c "source '$installed/share/bash-completion/completions/coffer' && complete -p coffer" | grep _coffer >/dev/null || fail "bash completion"
[ "$(wc -l < "$installed/share/coffer/installed-files")" -ge 20 ] || fail "installed-files list"
# A prefix outside /usr writes nothing outside it, even as root (no system manifests unless asked).
find "$scratch/stage" -type f | grep -v "^$scratch/stage$scratch/prefix/" | head -3 > "$scratch/outside" || true
[ ! -s "$scratch/outside" ] || fail "scripts/install --prefix wrote outside the prefix: $(cat "$scratch/outside")"
scripts/install --prefix "$scratch/prefix" --destdir "$scratch/stage" --uninstall > /dev/null
left=$(find "$scratch/stage" -type f | wc -l)
[ "$left" = 0 ] || fail "--uninstall left $left files: $(find "$scratch/stage" -type f | head -3)"
echo "package_test: ok ($(basename "$deb"), $(du -h "$deb" | cut -f1))"
