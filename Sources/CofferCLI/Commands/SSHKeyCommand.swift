import Coffer
import CofferTerminalKit

/// `coffer ssh-key`: SSH keys kept in the vault as ssh-key items (SPEC.md §6.3), for the agent.
struct SSHKeyCommand: Command {
    static let subcommands = ["add", "list"]
    static let name = "ssh-key"
    static let changesVault = true
    static let summary = "make, import and list the SSH keys the agent serves"
    static let usage = "ssh-key add NAME [--import FILE|-] [--passphrase-file FILE] [--confirm] | ssh-key list"
    static let discussion = """
        'add NAME' makes a new Ed25519 key in the vault (libsodium) and prints its public key in
        authorized_keys form; --import reads an OpenSSH private key instead (a path, or - for
        standard input). A key protected by a passphrase is opened with ssh-keygen on a tmpfs
        (the passphrase asked on the terminal, or the first line of --passphrase-file) and kept
        without one: the vault's seal protects it. --confirm makes the agent ask before each
        signature (the item's field 'confirm: yes'). 'list' prints every key's public half as
        authorized_keys lines, while the vault is locked too: one's own, then each team's
        (commented TEAM:NAME), as the agent serves them.
        """
    static let examples = ["coffer ssh-key add laptop", "coffer ssh-key add work --import ~/.ssh/id_ed25519", "coffer ssh-key list >> ~/.ssh/authorized_keys"]
    static let options: [OptionSpec] = [
        .value("import", "an OpenSSH private key file to import (- for standard input)"),
        .value("passphrase-file", "the imported key's passphrase on the first line of FILE"),
        .flag("confirm", "ask before each signature with this key"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(1...2, names: "add NAME, or list")
        switch (operands[0], operands.count) {
        case ("list", 1):
            let vault = try context.sessionVault(requireUnlocked: false)
            let keys: [SSHAgentKeys.Listed]
            do { keys = try SSHAgentKeys.listedKeys(in: vault) } catch CredentialIdentityStoreError.storeDisabled {
                try context.unlock(vault)
                keys = try SSHAgentKeys.listedKeys(in: vault)
            }
            // Then the teams' keys, as the agent serves them (SPEC.md §16.6).
            let door = context.hostSession(of: vault, interaction: nil)
            let shared = SSHAgentKeys.teamKeys(context.teams(ownedBy: vault.container), unlock: { _ = door.unlockFromSession($0) })
            for key in keys + shared.keys { context.print(key.key.authorizedKeysText + (key.comment.isEmpty ? "" : " " + key.comment)) }
            for name in shared.unreadable {
                context.note("the keys of team '\(name)' are not listed: its list cannot be read while it is locked ('coffer unlock' first)")
            }
            return .success
        case ("add", 2):
            return try add(name: operands[1], context)
        default:
            throw UsageError("expected 'add NAME' or 'list'")
        }
    }

    private static func add(name: String, _ context: CommandContext) throws -> ExitCode {
        guard !name.isEmpty, !name.contains("\n") else { throw CLIError("a key needs a one-line name", code: .usage) }
        // The master password first: with --password-stdin it is the line before a key on stdin.
        let vault = try context.unlockedVault()
        let key: Ed25519SigningKey
        if let source = context.arguments.value("import") {
            key = try importKey(from: source, context)
        } else {
            key = try Ed25519SigningKey.generate()
        }
        guard try vault.identityStore.items(named: name).isEmpty else {
            throw CLIError("an item named '\(name.prefix(80))' exists", hint: "choose another name", code: .exists)
        }
        let publicKey = SSHPublicKey(ed25519: key.publicKey)
        let line = publicKey.authorizedKeysText + " " + name
        var fields = [
            RecordField(name: "privateKey", value: try OpenSSHPrivateKey.encode(key, comment: name), hidden: true),
            RecordField(name: "publicKey", value: line, hidden: false),
            RecordField(name: "fingerprint", value: publicKey.fingerprint, hidden: false),
        ]
        if context.arguments.has("confirm") { fields.append(RecordField(name: "confirm", value: "yes", hidden: false)) }
        _ = try vault.add(RecordDraft(serviceIdentifiers: [], user: "", password: "", fields: fields, name: name, kind: .sshKey))
        context.print(line)
        context.note("added the SSH key '\(name)' (\(publicKey.fingerprint)); 'coffer ssh-agent' serves it")
        return .success
    }

    /// An OpenSSH private key file; one with a passphrase is first opened by ssh-keygen.
    private static func importKey(from source: String, _ context: CommandContext) throws -> Ed25519SigningKey {
        let bytes: [UInt8]
        if source == "-" {
            bytes = context.io.standardInput.readRemainingBytes(limit: 1 << 20)
        } else {
            do { bytes = try FileSystem.standard.readUserFile(source, limit: 1 << 20) } catch {
                throw CLIError("cannot read \(source): \(error)", code: .noInput)
            }
        }
        var text = String(decoding: bytes, as: UTF8.self)
        if OpenSSHPrivateKey.isEncrypted(text) { text = try withoutPassphrase(text, context) }
        do {
            return try OpenSSHPrivateKey.decode(text).key
        } catch {
            throw CLIError("\(source == "-" ? "standard input" : source): \(error)", code: .dataError)
        }
    }

    /// ssh-keygen takes the passphrase off a copy in a 0700 directory on a tmpfs (as `coffer
    /// edit` keeps its document): started without a terminal, it reads the passphrase from its
    /// stdin. The copy is overwritten and removed whatever happens.
    private static func withoutPassphrase(_ text: String, _ context: CommandContext) throws -> String {
        let passphrase: SecureBytes
        if let file = context.arguments.value("passphrase-file") {
            let bytes = try FileSystem.standard.readUserFile(file, limit: 64 << 10)
            guard let line = try BufferLineReader(bytes: bytes).readSecretLine() else { throw CLIError("\(file) is empty", code: .usage) }
            passphrase = line
        } else if let terminal = context.valueTerminal, let line = try terminal.readSecret(prompt: "Passphrase of the key: ") {
            passphrase = line
        } else {
            throw CLIError("the key is protected by a passphrase and there is no terminal to ask for it",
                           hint: "give it with --passphrase-file FILE", code: .temporaryFailure)
        }
        let directory = try EditorSession.makePrivateDirectory(prefix: "coffer-key", environment: context.io.environment)
        let path = directory + "/key"
        defer {
            FileSystem.standard.shred(path)
            FileSystem.standard.removeEmptyDirectory(directory)
        }
        do { try FileSystem.standard.createPrivateFile(Array(text.utf8), at: path) } catch {
            throw CLIError("cannot create \(path)", code: .ioError)
        }
        let status: Int32
        do {
            let child = try ChildProcess(["ssh-keygen", "-q", "-p", "-N", "", "-f", path], environment: context.io.environment, newSession: true)
            var line = passphrase.withUnsafeBytes { Array($0) } + [0x0A]
            defer { for index in line.indices { line[index] = 0 } }
            try? child.write(line)
            child.closeInput()
            _ = try? child.readToEnd(limit: 1 << 16)  // its messages: closing the pipe first would kill it with SIGPIPE
            status = child.wait()
        } catch {
            throw CLIError("\(error)", hint: "install openssh-client (ssh-keygen opens keys with a passphrase)", code: .unavailable)
        }
        guard status == 0 else { throw CLIError("ssh-keygen could not open the key: wrong passphrase?", code: .permissionDenied) }
        let decrypted = try FileSystem.standard.readUserFile(path, limit: 1 << 20)
        return String(decoding: decrypted, as: UTF8.self)
    }
}
