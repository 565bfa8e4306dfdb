import CofferProvider
import CofferHostKit

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
    private let device: TerminalDevice
    private let reader: FileDescriptorLineReader

    private init(device: TerminalDevice) {
        self.device = device
        reader = FileDescriptorLineReader(fd: device.descriptor)
    }

    /// The controlling terminal, or `nil` when the process has none.
    static func open() -> DeviceTerminal? {
        TerminalDevice.openControlling().map(DeviceTerminal.init(device:))
    }

    package func readSecret(prompt: String) throws -> SecureBytes? {
        write(prompt)
        return try device.withEchoOff { try reader.readSecretLine() }
    }

    package func readLine(prompt: String) -> String? {
        write(prompt)
        return reader.readTextLine()
    }

    package func write(_ text: String) {
        IO.writeAll(device.descriptor, text)
    }
}
