import CofferFormat

/// Every call Coffer makes to `git` (SPEC.md §15.1): plumbing only, so git never merges,
/// checks out or writes a file of the vault. Coffer reads fetched objects itself, authenticates
/// them and writes the container through its own transactions; git stores history and moves
/// objects between devices with the user's own transports and credentials.
///
/// Each call runs with `GIT_DIR` and `GIT_WORK_TREE` set to the container (never a repository
/// found above it), hooks and signing off, fsck of every object received, and no `GIT_*`
/// variable of the caller's that could point git elsewhere.
package final class Git {
    let container: String
    private let environment: Environment
    /// Wall-clock time spent waiting for git, so `coffer sync` can say what is its own.
    private(set) var elapsed: Duration = .zero

    static let branch = "refs/heads/main"
    package static let remoteBranch = "refs/remotes/origin/main"
    /// The remote commit this device last merged or pushed: the base of the next merge and the
    /// mark that tells a rewound or rewritten remote.
    static let syncedRef = "refs/coffer/synced"
    /// A team's membership lease on the remote, and where a fetch puts it (SPEC.md §16.5).
    static let leaseBranch = "refs/heads/coffer-lease"
    static let remoteLease = "refs/remotes/origin/coffer-lease"

    /// This device's state for the container, where the remote URL it set is pinned; `nil`
    /// only while a clone has no vault yet (its config was written by this process).
    private let deviceState: DeviceState?
    /// The remote this process wrote into `.git/config` (a clone before its vault is known).
    private var writtenRemote: String??
    /// Whether `.git/config` was found to be Coffer's own (once per instance, before any git).
    private var configurationChecked = false

    package init(container: String, environment: Environment, deviceState: DeviceState?) {
        self.deviceState = deviceState
        // Absolute, since git runs with the container as its working directory.
        self.container = FileSystem.absolutePath(container)
        var cleaned = environment
        for variable in environment.variables where variable.name.hasPrefix("GIT_") && !Self.keptVariables.contains(variable.name) {
            cleaned[variable.name] = nil
        }
        cleaned["GIT_DIR"] = self.container + "/.git"
        cleaned["GIT_WORK_TREE"] = self.container
        // Coffer's commits carry no name of the user's: the author is the program.
        cleaned["GIT_AUTHOR_NAME"] = "coffer"
        cleaned["GIT_AUTHOR_EMAIL"] = "coffer@localhost"
        cleaned["GIT_COMMITTER_NAME"] = "coffer"
        cleaned["GIT_COMMITTER_EMAIL"] = "coffer@localhost"
        cleaned["LC_ALL"] = "C"
        self.environment = cleaned
    }

    /// What a user may set to reach a remote (transport, credentials, prompts); nothing that
    /// moves the repository, its index or its objects.
    private static let keptVariables: Set<String> = [
        "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_TERMINAL_PROMPT", "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_NOSYSTEM", "GIT_SSL_NO_VERIFY", "GIT_SSL_CAINFO", "GIT_PROXY_COMMAND", "GIT_HTTP_USER_AGENT",
    ]

    /// Settings for every call, whatever the user's configuration says.
    private static let settings = [
        "core.hooksPath=/dev/null", "commit.gpgSign=false", "core.autocrlf=false", "core.fsmonitor=false",
        "core.quotePath=false", "transfer.fsckObjects=true", "fetch.recurseSubmodules=false", "gc.autoDetach=false",
        "advice.detachedHead=false", "init.defaultBranch=main",
    ] + storage + durability + index

    /// git's index of a million files is 100 MB, read and written whole by each command that
    /// stages; split, a write rewrites only the entries that changed (a later sync's staging
    /// of 200 paths: 0.5 s to 0.2 s).
    static let index = ["core.splitIndex=true"]

    /// Every file Coffer shares is ciphertext, which zlib cannot shrink: storing objects
    /// uncompressed took adding a 512 MiB attachment from 13.9 s to 3.3 s. Files over 2 MiB (only
    /// attachments: a record is at most 1 MiB and a few bytes) are streamed into their object
    /// rather than read whole: 529 MiB of memory to 5. Nor does one ciphertext resemble another,
    /// so a pack looks for no deltas (`pack.window=0`): pushing or repacking a million records
    /// otherwise compares each with ten others in vain.
    static let storage = ["core.compression=0", "core.bigFileThreshold=2m", "pack.window=0"]
    static let largeFileLength: Int64 = 2 << 20

    /// git's own durability (SPEC.md §15.4): objects, refs and its index reach the disk before a
    /// ref names them, loose objects in one flush per command (`batch`). Without it a power loss
    /// soon after a sync leaves durable names of empty objects, and every later sync failed.
    static let durability = ["core.fsync=added", "core.fsyncMethod=batch"]

    var gitDirectory: String { container + "/.git" }

    // MARK: Running

    /// Runs `git arguments` and returns its stdout.
    /// - Parameter allowedStatus: exit statuses that are answers, not failures.
    /// - Parameter readsIndex: `false` for a command that needs no index but reads it anyway
    ///   (`diff-tree` reads all of it: 0.1 s at a million files), given none.
    @discardableResult
    func run(
        _ arguments: [String], input: [UInt8] = [], allowedStatus: Set<Int32> = [0], readsIndex: Bool = true
    ) throws(SyncError) -> (status: Int32, output: [UInt8], errors: [UInt8]) {
        var output: [UInt8] = []
        do {
            let (status, errors) = try stream(arguments, input: input, allowedStatus: allowedStatus, readsIndex: readsIndex) { chunk in
                output += chunk
                guard output.count <= 1 << 30 else { throw ChildProcessError.lineTooLong }
            }
            return (status, output, errors)
        } catch let error as SyncError {
            throw error
        } catch {
            throw .git(command: arguments.first ?? "", status: -1, message: "\(error)")  // unreachable: the body throws only ChildProcessError
        }
    }

    /// Runs `git arguments`, handing its stdout to `body` piece by piece as git writes it (a
    /// million lines in constant memory). A failure of git is a `SyncError`; an error `body`
    /// throws stops git and is thrown as it is.
    @discardableResult
    func stream(
        _ arguments: [String], input: [UInt8] = [], allowedStatus: Set<Int32> = [0], readsIndex: Bool = true, into body: ([UInt8]) throws -> Void
    ) throws -> (status: Int32, errors: [UInt8]) {
        if !configurationChecked { try checkConfiguration() }
        let started = ContinuousClock.now
        defer { elapsed += ContinuousClock.now - started }
        let child = try spawn(arguments, readsIndex: readsIndex)
        do {
            if !input.isEmpty { try child.write(input) }
            child.closeInput()
            let errors = try child.streamOutput(errorLimit: 1 << 16, into: body)
            let status = child.wait()
            guard allowedStatus.contains(status) else {
                let message = Self.lastLines(errors)
                if let damage = Self.damage(in: errors) {
                    throw SyncError.damagedRepository(command: arguments.first ?? "", message: damage)
                }
                throw SyncError.git(command: arguments.first ?? "", status: status, message: message)
            }
            return (status, errors)
        } catch let error as ChildProcessError {
            throw SyncError.git(command: arguments.first ?? "", status: child.wait(), message: "\(error)")
        } catch {
            child.wait()
            throw error
        }
    }

    /// `git arguments` started, its stderr captured.
    private func spawn(_ arguments: [String], readsIndex: Bool = true) throws(SyncError) -> ChildProcess {
        var environment = environment
        if !readsIndex { environment["GIT_INDEX_FILE"] = gitDirectory + "/coffer-no-index" }
        do {
            return try ChildProcess(command(arguments), environment: environment, captureStandardError: true)
        } catch {
            throw .gitMissing("\(error)")
        }
    }

    /// One line of output, without its newline; `nil` when there is none.
    func line(_ arguments: [String], allowedStatus: Set<Int32> = [0]) throws(SyncError) -> String? {
        let text = String(decoding: try run(arguments, allowedStatus: allowedStatus).output, as: UTF8.self)
        let line = text.split(separator: "\n").first.map(String.init)
        return line?.isEmpty == false ? line : nil
    }

    /// `git -C <container> -c … arguments`: paths in arguments are relative to the container.
    private func command(_ arguments: [String]) -> [String] {
        ["git", "-C", container] + Self.settings.flatMap { ["-c", $0] } + arguments
    }

    /// git's words when a repository is damaged — an object or its index empty or torn, an
    /// object missing that a ref or tree names — rather than unreachable or busy; `nil` otherwise.
    static func damage(in errors: [UInt8]) -> String? {
        let lines = String(decoding: errors, as: UTF8.self).split(separator: "\n").map { $0.trimmingSpaces() }
        let signs = ["is empty", "is corrupt", "bad object", "unable to read", "missing blob", "missing tree", "missing commit",
                     "index file", "bad signature", "bad tree object", "did not send all necessary objects", "invalid sha1 pointer",
                     "unable to unpack", "inflate", "broken link", "could not parse object"]
        guard let line = lines.first(where: { line in signs.contains { line.lowercased().contains($0) } }) else { return nil }
        return line
    }

    /// The end of git's complaint, for an error message (its own words; never a secret of ours).
    private static func lastLines(_ bytes: [UInt8]) -> String {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { $0.trimmingSpaces() }
        return lines.filter { !$0.isEmpty }.suffix(3).joined(separator: "; ")
    }

    // MARK: Repository

    /// Whether `.git` is a directory (a link or a file there is not a repository of Coffer's).
    package var exists: Bool {
        guard let status = try? FileSystem.standard.userPathStatus(gitDirectory) else { return false }
        return status.kind == .directory
    }

    /// Makes the container a repository whose `main` holds the vault, and keeps everything but
    /// the vault's shared files out of it (SPEC.md §15.1).
    package func initialize() throws(SyncError) {
        if !exists {
            configurationChecked = true  // no repository yet: git reads no config of the container's
            try run(["init", "-q", "-b", "main", "--shared=0600"])
            try writeConfiguration(remote: nil)
        }
        // git leaves .git 0755 whatever --shared says; the repository is as private as the vault.
        do { try FileSystem.standard.restrictToUser(gitDirectory) } catch { throw .git(command: "chmod .git", status: 0, message: "\(error)") }
        try writeInfoFile("exclude", Self.excluded)
        try writeInfoFile("attributes", "* binary -filter -ident\n")
    }

    /// Only the header, records, tombstones and attachments are shared; the index, lock and temp files are
    /// this device's.
    static let excluded = "/*\n!/vault.coffer\n!/vault.seal\n!/team.coffer\n!/records/\n!/tombstones/\n!/attachments/\n"

    private func writeInfoFile(_ name: String, _ text: String) throws(SyncError) {
        do {
            let git = try FileSystem.standard.openDirectory(atPath: gitDirectory, check: .anyOwner)
            try FileSystem.standard.makeDirectory("info", in: git)
        } catch {
            throw .git(command: "make .git/info", status: 0, message: "\(error)")
        }
        try writeFile("info/" + name, text)
    }

    private func writeFile(_ name: String, _ text: String) throws(SyncError) {
        do {
            try FileSystem.standard.replaceUserFile(Array(text.utf8), at: gitDirectory + "/" + name, mode: 0o600)
        } catch {
            throw .git(command: "write .git/\(name)", status: 0, message: "\(error)")
        }
    }

    // MARK: The configuration Coffer owns (SPEC.md §15.1)

    /// The remote URL: the one this device pinned, once the config was checked to say it.
    package func remoteURL() throws(SyncError) -> String? {
        if !configurationChecked { try checkConfiguration() }
        return try pinnedRemote() ?? nil
    }

    /// Points `origin` at `url` by writing the whole config anew (never through git, which
    /// would first read the file as it is) and pins `url` on this device.
    package func setRemote(_ url: String) throws(SyncError) {
        try writeConfiguration(remote: url)
    }

    private func writeConfiguration(remote: String?) throws(SyncError) {
        try writeFile("config", GitConfiguration.render(remote: remote))
        if let deviceState {
            do { try deviceState.pinSyncRemote(remote) } catch { throw .git(command: "pin the remote", status: 0, message: "\(error)") }
        } else {
            writtenRemote = .some(remote)
        }
        configurationChecked = true
    }

    /// The remote pinned on this device: `.some(nil)` for none, `nil` when nothing is pinned.
    private func pinnedRemote() throws(SyncError) -> String?? {
        if let writtenRemote { return writtenRemote }
        guard let pinned = deviceState?.syncRemote() else { return nil }
        return .some(pinned.isEmpty ? nil : pinned)
    }

    /// Refuses a repository whose config is not the one Coffer wrote for the pinned remote, or
    /// that points git at objects or a common directory elsewhere. A config from before Coffer
    /// owned it is adopted (rewritten and pinned) when it holds only what `git init` and `git
    /// remote add` write.
    private func checkConfiguration() throws(SyncError) {
        guard exists else { configurationChecked = true; return }
        for planted in ["commondir", "objects/info/alternates", "objects/info/http-alternates", "config.worktree"]
        where (try? FileSystem.standard.userPathStatus(gitDirectory + "/" + planted)) != nil {
            throw .plantedConfiguration(file: ".git/" + planted, key: "the file itself")
        }
        let text: String
        do {
            let directory = try FileSystem.standard.openDirectory(atPath: gitDirectory, check: .anyOwner)
            text = String(decoding: try FileSystem.standard.readFile("config", in: directory, limit: 1 << 20), as: UTF8.self)
        } catch {
            throw .plantedConfiguration(file: ".git/config", key: "the file (\(error))")
        }
        if let pinned = try pinnedRemote() {
            guard text == GitConfiguration.render(remote: pinned) else {
                throw .plantedConfiguration(file: ".git/config", key: GitConfiguration.firstForeignKey(text, expectedRemote: pinned))
            }
        } else {
            switch GitConfiguration.inspect(text) {
            case .foreign(let key): throw .plantedConfiguration(file: ".git/config", key: key)
            case .plain(let remote): try writeConfiguration(remote: remote)
            }
        }
        configurationChecked = true
    }

    /// Removes the lock files of a git command that was killed (the caller holds the sync lock,
    /// so no git of Coffer's is running on this repository).
    func removeStaleLocks() {
        for path in ["index.lock", "HEAD.lock", "refs/heads/main.lock", "refs/remotes/origin/main.lock", "refs/coffer/synced.lock",
                     "config.lock", "packed-refs.lock", "shallow.lock"] {
            try? FileSystem.standard.removeUserFile(gitDirectory + "/" + path)
        }
    }

    // MARK: Refs and objects

    /// The commit `name` points to, or `nil` when it does not exist (an unborn branch).
    package func commit(_ name: String) throws(SyncError) -> String? {
        try line(["rev-parse", "-q", "--verify", name + "^{commit}"], allowedStatus: [0, 1])
    }

    /// The parents of `commit`, in order.
    func parents(of commit: String) throws(SyncError) -> [String] {
        let line = try line(["rev-list", "--parents", "-n", "1", commit]) ?? ""
        return line.split(separator: " ").dropFirst().map(String.init)
    }

    package func tree(of commit: String) throws(SyncError) -> String {
        try trees(of: [commit])[0]
    }

    /// The trees of several commits, in one call.
    func trees(of commits: [String]) throws(SyncError) -> [String] {
        let lines = String(decoding: try run(["rev-parse"] + commits.map { $0 + "^{tree}" }).output, as: UTF8.self)
            .split(separator: "\n").map(String.init)
        guard lines.count == commits.count else { throw .unexpectedOutput("rev-parse") }
        return lines
    }

    /// Where this device's branch, the remote's (as last fetched) and the last sync point are,
    /// in one call; `nil` for a ref that does not exist.
    package func syncRefs() throws(SyncError) -> (head: String?, remote: String?, synced: String?, lease: String?) {
        let output = try run([
            "for-each-ref", "--format=%(objectname) %(refname)", Self.branch, Self.remoteBranch, Self.syncedRef, Self.remoteLease,
        ]).output
        var refs: [String: String] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2 { refs[String(words[1])] = String(words[0]) }
        }
        return (refs[Self.branch], refs[Self.remoteBranch], refs[Self.syncedRef], refs[Self.remoteLease])
    }

    // MARK: The membership lease (SPEC.md §16.5)

    /// A new lease: an empty commit of its own (a random word in its message, so that two made
    /// in one second differ). Names nothing.
    package func makeLease() throws(SyncError) -> String {
        let word = (try? SecureRandom.bytes(8)).map(Hex.encode) ?? String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return try commitTree(emptyTree, parents: [], message: "coffer: lease " + word)
    }

    /// Puts `lease` on the remote if its lease is still `expected` (`nil`: none), or removes it
    /// when `lease` is `nil`. - Returns: `false` when another device's lease got there first.
    package func pushLease(_ lease: String?, expecting expected: String?) throws(SyncError) -> Bool {
        let result = try run(["push", "-q", "--porcelain"] + (try durableReceivePack()) + [
            "--force-with-lease=\(Self.leaseBranch):\(expected ?? "")", "origin", (lease ?? "") + ":" + Self.leaseBranch,
        ], allowedStatus: [0, 1])
        if result.status == 0 { return true }
        let text = String(decoding: result.output, as: UTF8.self)
        guard text.split(separator: "\n").contains(where: { $0.hasPrefix("!") }) else {
            throw .git(command: "push", status: result.status, message: "the remote refused the membership lease")
        }
        return false
    }

    /// When this device first saw the remote's lease `lease` (now, if this is the first time).
    package func leaseFirstSeen(_ lease: String, now: Int) -> Int {
        let file = gitDirectory + "/coffer-lease-seen"
        if let bytes = try? FileSystem.standard.readUserFile(file, limit: 256) {
            let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
            if words.count == 2, words[0] == lease, let seen = Int(words[1]) { return seen }
        }
        try? writeFile("coffer-lease-seen", "\(lease) \(now)")
        return now
    }

    func isAncestor(_ ancestor: String, of descendant: String) throws(SyncError) -> Bool {
        try run(["merge-base", "--is-ancestor", ancestor, descendant], allowedStatus: [0, 1]).status == 0
    }

    /// Moves `ref` to `new` only if it is still at `old` (`nil`: must not exist yet).
    func updateRef(_ ref: String, to new: String, from old: String?) throws(SyncError) {
        try run(["update-ref", "-m", "coffer sync", ref, new, old ?? String(repeating: "0", count: new.count)])
    }

    /// Points every ref of `refs` at `commit`, in one transaction.
    func setRefs(_ refs: [String], to commit: String) throws(SyncError) {
        try run(["update-ref", "-m", "coffer sync", "--stdin"], input: Array(refs.map { "update \($0) \(commit)\n" }.joined().utf8))
    }

    private var cachedEmptyTree: String?

    /// The id of the empty tree (it depends on the repository's hash function).
    var emptyTree: String {
        get throws(SyncError) {
            if let cachedEmptyTree { return cachedEmptyTree }
            let tree = try line(["hash-object", "-t", "tree", "/dev/null"]) ?? ""
            cachedEmptyTree = tree
            return tree
        }
    }

    /// The paths that differ between two trees, with both sides' object ids (`nil` for absent),
    /// each handed to `body` as `diff-tree` writes it, in path order: a first sync's million
    /// changes in constant memory (as values they cost 400 MB).
    /// - Returns: how many there were.
    @discardableResult
    func forEachChange(from old: String, to new: String, _ body: (TreeChange) throws -> Void) throws -> Int {
        var parser = TreeChange.StreamParser()
        var count = 0
        try stream(["diff-tree", "-r", "-z", "--no-renames", "--raw", old, new], readsIndex: false) { chunk in
            try parser.feed(chunk) { change in
                count += 1
                try body(change)
            }
        }
        try parser.finish()
        return count
    }

    /// The contents of `objects` (blob ids), each at most `limit` bytes.
    package func blobs(_ objects: [String], limit: Int) throws(SyncError) -> [String: [UInt8]] {
        guard !objects.isEmpty else { return [:] }
        let child = try spawn(["cat-file", "--batch"])
        let started = ContinuousClock.now
        defer { elapsed += ContinuousClock.now - started }
        var result: [String: [UInt8]] = [:]
        do {
            // One request, one answer: cat-file flushes after each object, so neither pipe fills.
            for object in Set(objects) {
                let size = try requestBlob(object, limit: UInt64(limit), from: child)
                let content = try child.readBytes(count: Int(size))
                guard content.count == size, try child.readBytes(count: 1) == [UInt8(ascii: "\n")] else {
                    throw SyncError.unexpectedOutput("cat-file ended early")
                }
                result[object] = content
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw .git(command: "cat-file", status: child.wait(), message: "\(error)")
        }
        child.closeInput()
        child.wait()
        return result
    }

    /// Passes one blob's content to `body` in pieces of at most 1 MiB (an attachment file of
    /// any size in constant memory); its size must be at most `limit`.
    package func streamBlob(_ object: String, limit: UInt64, into body: ([UInt8]) throws -> Void) throws {
        let child = try spawn(["cat-file", "--batch"])
        let started = ContinuousClock.now
        defer { elapsed += ContinuousClock.now - started }
        do {
            var left = try requestBlob(object, limit: limit, from: child)
            while left > 0 {
                let piece = try child.readBytes(count: Int(min(left, 1 << 20)))
                guard !piece.isEmpty else { throw SyncError.unexpectedOutput("cat-file ended early") }
                try body(piece)
                left -= UInt64(piece.count)
            }
            guard try child.readBytes(count: 1) == [UInt8(ascii: "\n")] else { throw SyncError.unexpectedOutput("cat-file ended early") }
        } catch let error as ChildProcessError {
            throw SyncError.git(command: "cat-file", status: child.wait(), message: "\(error)")
        }
        child.closeInput()
        child.wait()
    }

    /// Asks `cat-file --batch` for `object`: its size, once its header says it is a blob of at
    /// most `limit` bytes.
    private func requestBlob(_ object: String, limit: UInt64, from child: ChildProcess) throws -> UInt64 {
        try child.write(Array((object + "\n").utf8))
        guard let header = try child.readLine(limit: 200) else { throw SyncError.unexpectedOutput("cat-file ended early") }
        let words = String(decoding: header, as: UTF8.self).split(separator: " ")
        guard words.count == 3, words[1] == "blob", let size = UInt64(words[2]) else {
            throw SyncError.unexpectedOutput("object \(object) is not a file")
        }
        guard size <= limit else { throw SyncError.oversized(object: object, size: Int(clamping: size)) }
        return size
    }

    // MARK: Staging and committing

    /// Stages every change of the vault's shared files (the exclude file keeps the rest out),
    /// the large attachment files first (see `stage`).
    func stageAll() throws(SyncError) {
        try stage(largeFiles(under: SyncedPath.attachmentsDirectory))
        try run(["add", "-A", "--", "."])
    }

    /// The files in the shard directories of `directory` that git streams (`largeFileLength`).
    private func largeFiles(under directory: String) -> [String] {
        let fileSystem = FileSystem.standard
        guard let parent = try? fileSystem.openDirectory(atPath: container + "/" + directory, check: .anyOwner) else { return [] }
        var large: [String] = []
        for shard in (try? fileSystem.contents(of: parent)) ?? [] {
            guard let files = try? fileSystem.directory(shard, in: parent) else { continue }
            for name in (try? fileSystem.contents(of: files)) ?? [] {
                if let status = try? fileSystem.status(name, in: files), status.kind == .regular, status.size > Self.largeFileLength {
                    large.append(directory + "/" + shard + "/" + name)
                }
            }
        }
        return large
    }

    /// Writes `count` files into the repository as blobs of one pack, through `git fast-import`
    /// (no ref, no commit): `next` gives each file's bytes in turn. For a first commit of many
    /// records: `git add` of 1,000,000 files wrote a million loose objects, each a file created,
    /// flushed and renamed (5.7 minutes here); given the pack, `git add` only hashes each file,
    /// finds its object there and writes nothing.
    /// A file `next` cannot read (`nil`: gone, or not a plain file) is left for `git add`.
    func pack(count: Int, next: (Int) -> [UInt8]?) throws(SyncError) {
        guard count > 0 else { return }
        if !configurationChecked { try checkConfiguration() }
        let started = ContinuousClock.now
        defer { elapsed += ContinuousClock.now - started }
        let child = try spawn(["fast-import", "--quiet", "--big-file-threshold=1m", "--depth=0"])
        do {
            var buffer: [UInt8] = []
            buffer.reserveCapacity(1 << 20)
            for index in 0..<count {
                guard let bytes = next(index) else { continue }
                buffer += Array("blob\ndata \(bytes.count)\n".utf8)
                buffer += bytes
                buffer.append(0x0A)
                if buffer.count >= 1 << 20 {
                    try child.write(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try child.write(buffer)
        } catch {
            child.closeInput()
            let errors = (try? child.readOutputAndErrors(limit: 1 << 16, errorLimit: 1 << 16).errors) ?? []
            throw .git(command: "fast-import", status: child.wait(), message: Self.lastLines(errors).isEmpty ? "\(error)" : Self.lastLines(errors))
        }
        child.closeInput()
        let errors = (try? child.readOutputAndErrors(limit: 1 << 16, errorLimit: 1 << 16).errors) ?? []
        let status = child.wait()
        guard status == 0 else { throw .git(command: "fast-import", status: status, message: Self.lastLines(errors)) }
    }

    /// Stages exactly `paths` as they are in the container now (present: added or updated;
    /// absent: removed), the files git streams first: git 2.39, with batch fsync, loses a
    /// streamed file's temporary pack when a small file's loose object was written before it
    /// in the same command (`unable to make temporary pack file readable`).
    func stage(_ paths: [String]) throws(SyncError) {
        guard !paths.isEmpty else { return }
        let large = paths.filter { path in
            guard let status = try? FileSystem.standard.userPathStatus(container + "/" + path) else { return false }
            return status.kind == .regular && status.size > Self.largeFileLength
        }
        let streamed = Set(large)
        let ordered = large + paths.filter { !streamed.contains($0) }
        try run(["update-index", "--add", "--remove", "-z", "--stdin"], input: Array(ordered.joined(separator: "\0").utf8) + [0])
    }

    /// git's index file as inode, size and change time (it is replaced, never rewritten in
    /// place), or `nil` when there is none: whether anything wrote it since (`SyncBaseline`).
    func indexStamp() -> [Int64]? {
        guard let status = try? FileSystem.standard.userPathStatus(gitDirectory + "/index"), status.kind == .regular else { return nil }
        return [Int64(bitPattern: status.inode), status.size, status.changed]
    }

    func writeTree() throws(SyncError) -> String {
        try line(["write-tree"]) ?? ""
    }

    /// A commit of `tree` with `parents`. The message counts, never names (SPEC.md §15.5).
    func commitTree(_ tree: String, parents: [String], message: String) throws(SyncError) -> String {
        try line(["commit-tree", tree, "--no-gpg-sign", "-m", message] + parents.flatMap { ["-p", $0] }) ?? ""
    }

    /// The files of `commit` under `directory` that the container no longer has, with their
    /// objects (records deleted since: each needs a tombstone).
    func deletedFiles(since commit: String, under directory: String) throws(SyncError) -> [TreeChange] {
        try TreeChange.parse(run(["diff-index", "-z", "--raw", "--no-renames", "--diff-filter=D", commit, "--", directory]).output)
    }

    /// Path → object of every file of `tree` under the given paths (directories are listed
    /// recursively).
    package func objects(in tree: String, under paths: [String]) throws(SyncError) -> [String: String] {
        let output = try run(["ls-tree", "-r", "-z", "--full-tree", tree, "--"] + paths).output
        var objects: [String: String] = [:]
        for entry in output.split(separator: 0) {
            // "<mode> <type> <object>\t<path>"
            guard let tab = entry.firstIndex(of: UInt8(ascii: "\t")) else { throw .unexpectedOutput("ls-tree") }
            let words = String(decoding: entry[..<tab], as: UTF8.self).split(separator: " ")
            guard words.count == 3 else { throw .unexpectedOutput("ls-tree") }
            objects[String(decoding: entry[(tab + 1)...], as: UTF8.self)] = String(words[2])
        }
        return objects
    }

    /// Record, tombstone and header files that differ from the last commit, new ones included.
    func uncommittedFiles() throws(SyncError) -> Int {
        let output = try run(["--no-optional-locks", "status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", "."]).output
        return output.split(separator: 0).count
    }

    /// How many of `paths` differ from `tree` (changed, new or gone), looking at those paths
    /// only, in two git commands that read no index: the tree's objects for them (`cat-file`)
    /// and each file's hash (`hash-object`, unfiltered, as Coffer stages it). `git status` of a
    /// million files stats each one (2.3 s), and `add --dry-run` with the paths as pathspecs
    /// matched each of the index's million entries against every path (2.6 s for 200 paths).
    /// A link or directory where a file belongs counts as a change, as git's type change does.
    /// Writes nothing.
    func uncommittedFiles(among paths: [String], since tree: String) throws(SyncError) -> Int {
        guard !paths.isEmpty else { return 0 }
        var files: [String] = []  // plain files, hashed
        var differing = 0
        for path in paths {
            switch (try? FileSystem.standard.userPathStatus(container + "/" + path))?.kind {
            case .regular?: files.append(path)
            case nil: break
            default: differing += 1
            }
        }
        let present = Set(files)
        let committed = try run(["cat-file", "--batch-check=%(objectname)"], input: Array(paths.map { tree + ":" + $0 + "\n" }.joined().utf8),
                                readsIndex: false).output.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let hashes = files.isEmpty ? [] : try run(["hash-object", "--no-filters", "--stdin-paths"], input: Array(files.map { $0 + "\n" }.joined().utf8),
                                                 readsIndex: false).output.split(separator: UInt8(ascii: "\n"))
        guard committed.count >= paths.count, hashes.count == files.count else { throw .unexpectedOutput("cat-file") }
        var hashOf: [String: ArraySlice<UInt8>] = [:]
        for (file, hash) in zip(files, hashes) { hashOf[file] = hash }
        for (path, line) in zip(paths, committed) {
            let inTree = !line.reversed().starts(with: " missing".utf8.reversed())
            switch (inTree, present.contains(path)) {
            case (true, true): if hashOf[path] != line { differing += 1 }
            case (true, false), (false, true): differing += 1
            case (false, false): break
            }
        }
        return differing
    }

    /// Commits `a` has that `b` lacks, and the other way.
    func divergence(_ a: String, _ b: String) throws(SyncError) -> (Int, Int) {
        let words = try line(["rev-list", "--left-right", "--count", a + "..." + b])?.split(whereSeparator: { $0 == "\t" || $0 == " " }) ?? []
        guard words.count == 2, let ahead = Int(words[0]), let behind = Int(words[1]) else { throw .unexpectedOutput("rev-list") }
        return (ahead, behind)
    }

    func commitCount(_ commit: String) throws(SyncError) -> Int {
        Int(try line(["rev-list", "--count", commit]) ?? "") ?? 0
    }

    // MARK: The remote

    package func fetch() throws(SyncError) {
        try run(["fetch", "-q", "--prune", "--no-tags", "--no-write-fetch-head", "origin", "+refs/heads/*:refs/remotes/origin/*"])
    }

    /// Pushes `commit` to the remote's `main` without forcing.
    /// - Returns: `false` when the remote moved on since the fetch (rejected as not a
    ///   fast-forward, or its ref was being moved by another push), so the caller fetches and
    ///   merges again.
    /// - Throws: when the remote refused for another reason (a checked-out branch of a non-bare
    ///   repository, a hook, permissions): trying again would not help.
    func push(_ commit: String) throws(SyncError) -> PushOutcome {
        let result = try run(["push", "-q", "--porcelain"] + (try durableReceivePack()) + ["origin", commit + ":" + Self.branch],
                             allowedStatus: [0, 1])
        if result.status == 0 { return .pushed }
        let text = String(decoding: result.output, as: UTF8.self)
        guard let rejection = text.split(separator: "\n").first(where: { $0.hasPrefix("!") }) else {
            throw .git(command: "push", status: result.status, message: "the remote refused the push")
        }
        let reason = rejection.split(separator: "\t").last.map(String.init) ?? ""
        if reason.hasPrefix("[rejected]") { return .rejected(lock: nil) }
        if ["failed to lock", "failed to update ref", "cannot lock"].contains(where: reason.contains) {
            return .rejected(lock: Self.heldLock(in: result.errors) ?? "refs/heads/main.lock")
        }
        // The remote's receive-pack met an object of its own empty or torn (a power loss there).
        if let damage = Self.damage(in: result.errors) { throw .damagedRemote(message: damage) }
        throw .git(command: "push", status: result.status, message: "the remote refused the push: \(reason)")
    }

    enum PushOutcome: Equatable {
        case pushed
        /// The remote moved on since the fetch, or its branch was locked: `lock` is the lock
        /// file git could not create on the remote (another push in flight, or one left by a
        /// git that was stopped there).
        case rejected(lock: String?)
    }

    /// The lock file in git's "Unable to create 'PATH': File exists".
    static func heldLock(in errors: [UInt8]) -> String? {
        let text = String(decoding: errors, as: UTF8.self)
        guard let start = text.firstRange(of: "Unable to create '")?.upperBound,
              let end = text[start...].firstRange(of: "': File exists")?.lowerBound
        else { return nil }
        return String(text[start..<end]).replacing("/./", with: "/")
    }

    /// A remote on this machine (a path, `file://`) gets git's durability too: its
    /// `receive-pack` runs here, and `-c` settings do not reach it (git clears them for a local
    /// transport). A server's durability is the server's.
    private func durableReceivePack() throws(SyncError) -> [String] {
        guard let url = try remoteURL(), url.hasPrefix("/") || url.hasPrefix("file://") else { return [] }
        return ["--receive-pack=git " + Self.durability.map { "-c " + $0 }.joined(separator: " ") + " receive-pack"]
    }
}

/// One path of `git diff-tree --raw`: its object on each side (`nil` where it is absent).
struct TreeChange: Equatable {
    let path: String
    let oldMode: String
    let newMode: String
    let oldObject: String?
    let newObject: String?

    /// Parses `:oldmode newmode oldsha newsha status\0path\0` entries.
    static func parse(_ output: [UInt8]) throws(SyncError) -> [TreeChange] {
        var changes: [TreeChange] = []
        var parser = StreamParser()
        do {
            try parser.feed(output) { changes.append($0) }
            try parser.finish()
        } catch let error as SyncError {
            throw error
        } catch {
            throw .unexpectedOutput("diff-tree: \(error)")  // unreachable: the body throws nothing
        }
        return changes
    }

    /// `diff-tree -z --raw` output parsed as it arrives in pieces of any size.
    struct StreamParser {
        private var pending: [UInt8] = []

        /// Hands each entry complete after `chunk` to `body`; keeps the rest for the next piece.
        mutating func feed(_ chunk: [UInt8], _ body: (TreeChange) throws -> Void) throws {
            pending += chunk
            var start = pending.startIndex
            while let headerEnd = pending[start...].firstIndex(of: 0), let pathEnd = pending[(headerEnd + 1)...].firstIndex(of: 0) {
                try body(try TreeChange(header: pending[start..<headerEnd], path: pending[(headerEnd + 1)..<pathEnd]))
                start = pathEnd + 1
            }
            pending.removeFirst(start - pending.startIndex)
        }

        /// Output that ended inside an entry is no diff-tree output.
        func finish() throws(SyncError) {
            guard pending.isEmpty else { throw .unexpectedOutput("diff-tree ended inside an entry") }
        }
    }
}

extension TreeChange {
    /// One entry from its two NUL-terminated fields.
    init(header: ArraySlice<UInt8>, path: ArraySlice<UInt8>) throws(SyncError) {
        let header = String(decoding: header, as: UTF8.self)
        let words = header.dropFirst().split(separator: " ")
        guard header.hasPrefix(":"), words.count == 5 else { throw .unexpectedOutput("diff-tree: \(header)") }
        let absent = { (object: Substring) -> String? in object.allSatisfy { $0 == "0" } ? nil : String(object) }
        self.init(
            path: String(decoding: path, as: UTF8.self), oldMode: String(words[0]), newMode: String(words[1]),
            oldObject: absent(words[2]), newObject: absent(words[3]))
    }
}
