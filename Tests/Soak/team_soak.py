#!/usr/bin/python3
"""A team under a team's real load (issue 50): people as Unix users of their own, each with their
own vault, syncing a team through lighttpd serving `git http-backend` with per-person basic
authentication answered by `git-credential-coffer` from each person's own vault. Members add,
edit and delete their items and sync every few operations while the founder removes one member
and adds another. Afterwards every write that a successful sync pushed is checked on every
member (nothing lost, nothing deleted comes back), and every object in the remote's history
written after the removal is tried with every key the removed member held.

    team_soak.py --bin DIR [--people N] [--seconds S] [--report FILE] [--keep]

DIR holds `coffer` and `git-credential-coffer`. Runs as root (it makes the people with
setpriv). Prints its figures; exit 0 when nothing was lost, nothing came back and nothing leaked.
Uses /usr/bin/python3 for PyNaCl (python3-nacl), through which Tools/reference opens the removed
member's keys independently of Coffer.
"""
import argparse, json, os, random, shutil, socket, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tools", "reference"))
import coffer_reference as ref  # noqa: E402
import team_reference as team_ref  # noqa: E402

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj", "olivia",
         "peggy", "rupert", "sybil", "trent", "victor", "walter", "yvonne", "zoe", "quentin"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """lighttpd on 127.0.0.1: /git/* is git http-backend behind basic authentication."""

    def __init__(self, root, users):
        self.root, self.port = root, free_port()
        os.makedirs(root + "/repos", exist_ok=True)
        os.makedirs(root + "/www", exist_ok=True)
        with open(root + "/users", "w") as f:
            f.writelines(f"{name}:{password}\n" for name, password in users.items())
        with open(root + "/lighttpd.conf", "w") as f:
            f.write(f"""
server.modules = ("mod_alias", "mod_auth", "mod_authn_file", "mod_cgi", "mod_setenv", "mod_accesslog")
server.document-root = "{root}/www"
server.bind = "127.0.0.1"
server.port = {self.port}
server.errorlog = "{root}/error.log"
accesslog.filename = "{root}/access.log"
server.max-connections = 256
alias.url = ("/git" => "/usr/lib/git-core/git-http-backend")
$HTTP["url"] =~ "^/git" {{
    cgi.assign = ("" => "")
    setenv.add-environment = ("GIT_PROJECT_ROOT" => "{root}/repos", "GIT_HTTP_EXPORT_ALL" => "1")
}}
auth.backend = "plain"
auth.backend.plain.userfile = "{root}/users"
auth.require = ("/git" => ("method" => "basic", "realm" => "coffer team", "require" => "valid-user"))
""")
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", root + "/repos/ops.git"], check=True)
        subprocess.run(["git", "--git-dir", root + "/repos/ops.git", "config", "http.receivepack", "true"], check=True)
        self.process = subprocess.Popen(["lighttpd", "-D", "-f", root + "/lighttpd.conf"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("team_soak: lighttpd did not start: " + self.process.stderr.read().decode())

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.process.terminate()
        self.process.wait()


class Person:
    """One person: a Unix user of their own (setpriv), their own HOME, vault and keyring."""

    def __init__(self, name, uid, scratch, bin_dir):
        self.name, self.uid = name, uid
        self.home = f"{scratch}/home/{name}"
        self.master = f"master of {name}"
        self.server_password = f"{name}-server-{random.randrange(1 << 30)}"
        self.bin = bin_dir
        os.makedirs(self.home, mode=0o700)
        os.chown(self.home, uid, uid)
        self.env = {
            "HOME": self.home, "XDG_STATE_HOME": self.home + "/state", "XDG_DATA_HOME": self.home + "/data",
            "XDG_CONFIG_HOME": self.home + "/config", "USER": name, "PATH": f"{bin_dir}:/usr/bin:/bin", "GIT_TERMINAL_PROMPT": "0",
            "COFFER_AGENT": "off", "LC_ALL": "C.UTF-8",
        }

    def run(self, arguments, stdin="", timeout=180):
        """`coffer arguments` as this person; (exit code, stdout, stderr, seconds)."""
        started = time.monotonic()
        try:
            done = subprocess.run(
                ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--", f"{self.bin}/coffer"] + arguments,
                input=stdin.encode(), capture_output=True, env=self.env, timeout=timeout, cwd=self.home)
            return done.returncode, done.stdout.decode(), done.stderr.decode(), time.monotonic() - started
        except subprocess.TimeoutExpired:
            return 124, "", f"timed out after {timeout} s", time.monotonic() - started

    def must(self, arguments, stdin=""):
        code, out, err, _ = self.run(arguments, stdin)
        if code != 0:
            raise SystemExit(f"team_soak: {self.name}: coffer {' '.join(arguments)}: exit {code}: {err}")
        return out

    def git(self, arguments):
        subprocess.run(["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--", "git"] + arguments,
                       env=self.env, check=True, cwd=self.home, capture_output=True)

    def machine(self, server_url):
        self.must(["init", "--kdf", "interactive", "--password-stdin"], self.master + "\n")
        self.must(["add", server_url, self.name, "--password-stdin"], f"{self.master}\n{self.server_password}\n")
        self.must(["unlock", "--timeout", "60m", "--password-stdin"], self.master + "\n")
        self.git(["config", "--global", "credential.helper", f"{self.bin}/git-credential-coffer"])

    @property
    def recipient(self):
        return self.must(["whoami"]).strip()

    def fingerprint(self):
        return json.loads(self.must(["whoami", "--json"]))["fingerprint"]


class Member(threading.Thread):
    """A member's load: adds, edits and deletes of their own items, a sync every few writes.
    Each write is logged; it counts once a later sync of this member exited 0 (it was pushed)."""

    def __init__(self, person, until, seed):
        super().__init__(daemon=True)
        self.person, self.until, self.random = person, until, random.Random(seed)
        self.log = []  # (item, password or None for a deletion, confirmed)
        self.live = {}  # item → password
        self.counter = 0
        self.syncs = []  # (exit code, seconds, finished at)
        self.errors = []  # the end of each failed sync's message
        self.stopped = False

    def write(self):
        choice = self.random.random()
        if not self.live or choice < 0.45:
            self.counter += 1
            item = f"{self.person.name}-{self.counter}.example"
            password = f"{item}#{self.random.randrange(1 << 40)}"
            code, _, _, _ = self.person.run(["add", "--team", "ops", item, self.person.name, "--password-stdin"], f"{self.person.master}\n{password}\n")
            if code == 0:
                self.live[item] = password
                self.log.append([item, password, False])
        elif choice < 0.8:
            item = self.random.choice(sorted(self.live))
            password = f"{item}#{self.random.randrange(1 << 40)}"
            code, _, _, _ = self.person.run(["edit", f"ops:{item}/{self.person.name}", "--new-password", "--password-stdin"],
                                             f"{self.person.master}\n{password}\n")
            if code == 0:
                self.live[item] = password
                self.log.append([item, password, False])
        else:
            item = self.random.choice(sorted(self.live))
            code, _, _, _ = self.person.run(["rm", f"ops:{item}/{self.person.name}", "--force", "--password-stdin"], self.person.master + "\n")
            if code == 0:
                del self.live[item]
                self.log.append([item, None, False])

    def sync(self):
        code, _, err, seconds = self.person.run(["team", "sync", "ops"])
        self.syncs.append((code, seconds, time.monotonic()))
        if code not in (0, 77):
            self.errors.append(err.strip()[-300:])
        if code == 0:
            for entry in self.log:
                entry[2] = True
        elif code == 77:
            self.stopped = True  # removed: nothing more of this member lands
        return code

    def run(self):
        while time.monotonic() < self.until and not self.stopped:
            for _ in range(self.random.randint(1, 4)):
                self.write()
            self.sync()


def remote_history(repo):
    """Every commit of the remote's main, oldest first, with its (path, object) files."""
    commits = subprocess.run(["git", "--git-dir", repo, "rev-list", "--reverse", "--topo-order", "main"], capture_output=True,
                             text=True, check=True).stdout.split()
    history = []
    for commit in commits:
        listing = subprocess.run(["git", "--git-dir", repo, "ls-tree", "-r", commit], capture_output=True, text=True, check=True).stdout
        files = {}
        for line in listing.splitlines():
            meta, path = line.split("\t", 1)
            files[path] = meta.split()[2]
        history.append((commit, files))
    return history


def blob(repo, obj):
    return subprocess.run(["git", "--git-dir", repo, "cat-file", "blob", obj], capture_output=True, check=True).stdout


def removed_members_keys(person, scratch):
    """The team keys the removed member holds: her own copy of team.coffer, opened with her own
    identity by the reference implementation (her master password → vault key → identity)."""
    containers = person.home + "/data/coffer/group-containers"
    with open(containers + "/team.ops/team.coffer", "rb") as f:
        data = f.read()
    with open(containers + "/group.coffer.default/vault.coffer", "rb") as f:
        _, vault_key = ref.read_header(f.read(), person.master.encode())
    identity = team_ref.Identity(vault_key)
    _, team_key, earlier = team_ref.open_team_file(data, identity)
    return [team_key] + earlier, identity


def opens(data, path, keys, team_id):
    record_id = bytes.fromhex(path.rsplit("/", 1)[1])
    for key in keys:
        try:
            if path.startswith("records/"):
                ref.open_record(team_id, key, record_id.hex(), data)
            else:
                ref.open_tombstone(team_id, key, record_id, data)
            return True
        except Exception:
            continue
    return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--people", type=int, default=5, help="members writing under load, the founder and the one added later not counted")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--report")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("team_soak: run as root (the people are Unix users of their own, made with setpriv)")
    if shutil.which("lighttpd") is None:
        raise SystemExit("team_soak: lighttpd is missing (apt-get install lighttpd)")
    scratch = tempfile.mkdtemp(prefix="coffer-soak-")
    os.chmod(scratch, 0o755)
    people = [Person(name, 41000 + index, scratch, os.path.abspath(options.bin)) for index, name in enumerate(NAMES[:options.people + 2])]
    founder, members, newcomer = people[0], people[1:-1], people[-1]
    removed = members[1]
    server = Server(scratch + "/srv", {p.name: p.server_password for p in people})
    figures = {"people": len(people), "seconds": options.seconds}
    failures = []
    try:
        started = time.monotonic()
        for person in people:
            person.machine(server.url)
        remote = server.url + "/git/ops.git"
        founder.must(["team", "create", "ops", "--remote", remote])
        for person in members:
            founder.must(["team", "add", "ops", person.recipient, "--as", person.name])
        fingerprint = founder.fingerprint()
        for person in members:
            person.must(["team", "join", remote, "--founder", fingerprint])
        figures["setupSeconds"] = round(time.monotonic() - started, 1)

        loaded = time.monotonic()
        until = loaded + options.seconds
        load = [Member(person, until, seed) for seed, person in enumerate(members)]
        for member in load:
            member.start()
        time.sleep(options.seconds / 3)
        begun = time.monotonic()
        code, _, err, _ = founder.run(["team", "remove", "ops", removed.name], timeout=600)
        figures["removalLandsSeconds"] = round(time.monotonic() - begun, 2)
        if code != 0:
            failures.append(f"the removal failed (exit {code}): {err.strip()}")
        removal_done = time.monotonic()
        time.sleep(max(0, loaded + options.seconds / 2 - time.monotonic()))
        begun = time.monotonic()
        code, _, err, _ = founder.run(["team", "add", "ops", newcomer.recipient, "--as", newcomer.name], timeout=600)
        figures["additionLandsSeconds"] = round(time.monotonic() - begun, 2)
        if code != 0:
            failures.append(f"the addition failed (exit {code}): {err.strip()}")
        code, _, err, _ = newcomer.run(["team", "join", remote, "--founder", fingerprint], timeout=600)
        if code != 0:
            failures.append(f"the new member could not join (exit {code}): {err.strip()}")
        else:
            extra = Member(newcomer, until, 99)
            extra.start()
            load.append(extra)
        for member in load:
            member.join()

        # Quiet: every remaining member syncs until nothing moves.
        active = [p for p in [founder] + members + [newcomer] if p is not removed]
        for _ in range(2):
            for person in active:
                code, _, err, _ = person.run(["team", "sync", "ops"], timeout=600)
                if code != 0:
                    failures.append(f"{person.name}'s final sync: exit {code}: {err.strip()}")
                else:
                    for member in load:
                        if member.person is person:
                            for entry in member.log:
                                entry[2] = True

        # What every confirmed write says each item must be (items are written by their owner only).
        expected = {}
        writes = 0
        for member in load:
            for item, password, confirmed in member.log:
                if confirmed:
                    expected[item] = password
                    writes += 1
        figures["confirmedWrites"] = writes
        lost = came_back = 0
        for person in active:
            code, out, err, _ = person.run(["export", "--format", "json", "--plaintext", "--group", "team.ops"])
            if code != 0:
                failures.append(f"{person.name}: export of the team: exit {code}: {err.strip()}")
                continue
            holds = {record["serviceIdentifiers"][0]["identifier"]: record["password"] for record in json.loads(out) if record["serviceIdentifiers"]}
            for item, password in expected.items():
                if password is None and item in holds:
                    came_back += 1
                    failures.append(f"{person.name}: {item} was deleted and came back")
                elif password is not None and holds.get(item) != password:
                    lost += 1
                    failures.append(f"{person.name}: {item} holds {holds.get(item)!r}, the last write was {password!r}")
        figures["lostWrites"], figures["cameBack"] = lost, came_back

        # No object written after the removal opens under a key the removed member held.
        keys, removed_identity = removed_members_keys(removed, scratch)
        repo = server.root + "/repos/ops.git"
        history = remote_history(repo)
        team_id = None
        removal_index = None
        was_member = False
        for position, (_, files) in enumerate(history):
            data = blob(repo, files["team.coffer"])
            _, team_id, slots, _, _ = team_ref.split_team_file(data)
            has_slot = any(s[0] == team_ref.slot_id(removed_identity.sign_pk, team_id) for s in slots)
            if was_member and not has_slot:
                removal_index = position  # the first commit after she had been added that has no slot for her
                break
            was_member = was_member or has_slot
        if removal_index is None:
            failures.append("the removal never reached the remote")
        else:
            before = set()
            for _, files in history[:removal_index]:
                before.update(files.items())
            tried = leaks = 0
            for _, files in history[removal_index:]:
                for path, obj in files.items():
                    if (path, obj) in before or not (path.startswith("records/") or path.startswith("tombstones/")):
                        continue
                    tried += 1
                    if opens(blob(repo, obj), path, keys, team_id):
                        leaks += 1
                        failures.append(f"{path} ({obj[:12]}), written after the removal, opens under a key {removed.name} held")
            figures["objectsTriedAfterRemoval"], figures["leaks"] = tried, leaks

        syncs = [s for member in load for s in member.syncs]
        good = [s for s in syncs if s[0] == 0]
        figures["syncs"] = len(syncs)
        figures["syncsPerMinute"] = round(len(good) / (options.seconds / 60), 1)
        figures["slowestSyncSeconds"] = round(max((s[1] for s in good), default=0), 2)
        figures["failedSyncs"] = {str(code): sum(1 for s in syncs if s[0] == code) for code in sorted({s[0] for s in syncs if s[0] != 0})}
        figures["failedSyncMessages"] = [f"{m.person.name}: {e}" for m in load for e in m.errors][:5]
        figures["removedMembersSyncsAfterRemoval"] = sum(1 for m in load if m.person is removed for s in m.syncs if s[2] > removal_done)
    finally:
        for person in people:
            person.run(["lock"])
        server.stop()
        if not options.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    figures["failures"] = failures[:50]
    text = json.dumps(figures, indent=2)
    print(text)
    if options.report:
        with open(options.report, "w") as f:
            f.write(text + "\n")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
