import Coffer
import CofferTerminalKit

/// Runs `$VISUAL`/`$EDITOR` (then `editor`, then `vi`) on a document holding secrets, as `pass
/// edit` does: the file lives in a fresh 0700 directory on a tmpfs (`$XDG_RUNTIME_DIR`, else
/// `/dev/shm`), is created 0600, and is overwritten with zeros and removed afterwards — on an error
/// too, and on Ctrl-C or a hang-up, which are held back while the editor runs and acted on only
/// after the cleanup.
struct EditorSession {
    let environment: Environment

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The command line of the editor, split on spaces (`EDITOR="code --wait"` works).
    var editor: [String] {
        for name in ["VISUAL", "EDITOR"] {
            if let value = environment[name]?.trimmingSpaces(), !value.isEmpty { return value.split(separator: " ").map(String.init) }
        }
        return FileSystem.isExecutable("/usr/bin/editor") ? ["editor"] : ["vi"]
    }

    /// A new 0700 directory on a tmpfs, where a secret in the clear may sit for a moment without
    /// reaching a disk: the editor's document, a key file ssh-keygen opens. `$XDG_RUNTIME_DIR`
    /// when it is memory-backed (it is not always: a container, a `su` session), else
    /// `/dev/shm`; neither, and nothing is written.
    static func makePrivateDirectory(prefix: String, environment: Environment, candidates: [String]? = nil) throws -> String {
        let bases = candidates ?? ([environment["XDG_RUNTIME_DIR"]].compactMap { $0?.isEmpty == false ? $0 : nil } + ["/dev/shm"])
        guard let base = bases.first(where: FileSystem.isMemoryBacked) else {
            throw Failure(description: "no tmpfs to hold the text in the clear (\(bases.joined(separator: ", ")) \(bases.count == 1 ? "is" : "are") on a disk); nothing was written")
        }
        do { return try FileSystem.standard.makeTemporaryDirectory(prefix: prefix, in: base) } catch {
            throw Failure(description: "cannot make a private directory in \(base) (\(error))")
        }
    }

    /// Lets the person edit `text`; the edited text, or `nil` when the editor failed.
    func edit(_ text: String, name: String = "coffer-item.txt") throws -> String? {
        let directory = try Self.makePrivateDirectory(prefix: "coffer-edit", environment: environment)
        let path = directory + "/" + name
        // Held back until the file is gone; the editor itself gets default handling.
        return try SignalMask.holdingBack(SignalMask.endingSignals) {
            let fileSystem = FileSystem.standard
            defer {
                fileSystem.shred(path)
                fileSystem.removeEmptyDirectory(directory)
            }
            do { try fileSystem.createPrivateFile(Array(text.utf8), at: path) } catch {
                throw Failure(description: "cannot create \(path)")
            }
            guard try run(editor + [path]) == 0 else { return nil }
            guard let bytes = try? fileSystem.readUserFile(path, limit: 1 << 20) else {
                throw Failure(description: "the editor left no readable file")
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Spawns `arguments` on this terminal (the signals this process holds back start at their
    /// defaults there, as every child's do) and waits; the exit status.
    private func run(_ arguments: [String]) throws -> Int32 {
        let child: Int32
        do { child = try Spawn(arguments, environment: environment).start() } catch {
            throw Failure(description: "cannot start the editor: \(error)")
        }
        return Spawn.exitStatus(of: child) ?? -1
    }
}
