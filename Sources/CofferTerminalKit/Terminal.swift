import CofferProvider
import CofferHostKit
import Glibc

/// An interactive terminal: prompts on it and reads answers from it, never from stdin, so a
/// password typed there cannot be mixed up with piped data.
public protocol Terminal: AnyObject {
    /// Shows `prompt` and reads a line with echo off. `nil` when the user ends input (Ctrl-D).
    func readSecret(prompt: String) throws -> SecureBytes?
    /// Shows `prompt` and reads a line with echo on.
    func readLine(prompt: String) -> String?
    /// Writes a message to the terminal (not to stdout).
    func write(_ text: String)
}

/// `/dev/tty` with termios echo control.
package final class DeviceTerminal: Terminal {
    private let fd: Int32
    private let reader: FileDescriptorLineReader

    private init(fd: Int32) {
        self.fd = fd
        reader = FileDescriptorLineReader(fd: fd)
    }

    deinit { close(fd) }

    /// The controlling terminal, or `nil` when the process has none.
    static func open() -> DeviceTerminal? {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        guard isatty(fd) == 1 else {
            close(fd)
            return nil
        }
        return DeviceTerminal(fd: fd)
    }

    package func readSecret(prompt: String) throws -> SecureBytes? {
        write(prompt)
        var saved = termios()
        let canRestore = tcgetattr(fd, &saved) == 0
        if canRestore {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(fd, TCSAFLUSH, &silent)
        }
        defer { if canRestore { tcsetattr(fd, TCSAFLUSH, &saved) } }
        return try reader.readSecretLine()
    }

    package func readLine(prompt: String) -> String? {
        write(prompt)
        return reader.readTextLine()
    }

    package func write(_ text: String) {
        IO.writeAll(fd, text)
    }
}
