import CLinux
import CofferSupport
import Glibc

extension Spawn {
    /// Runs `arguments[0]` (this very file: no `PATH` search) with `input` on its stdin through a
    /// pipe and /dev/null for its output and errors, and waits for it alone — not for
    /// descendants it leaves behind (xclip and wl-copy fork a child that keeps serving the
    /// selection, which Foundation's `Process` would wait for).
    /// - Returns: its exit status (128 + signal when killed).
    public static func run(_ arguments: [String], environment: Environment, feeding input: [UInt8]) throws(ChildProcessError) -> Int32 {
        let program = arguments.first ?? ""
        var pipeEnds: [Int32] = [-1, -1]
        guard coffer_pipe_cloexec(&pipeEnds) == 0 else { throw .launch(program, errno) }
        var spawn = Spawn(arguments, environment: environment, executable: program)
        spawn.fileActions = [
            .duplicate(pipeEnds[0], to: 0), .open("/dev/null", as: 1, flags: O_WRONLY), .open("/dev/null", as: 2, flags: O_WRONLY), .closeFrom(3),
        ]
        let pid: pid_t
        do { pid = try spawn.start() } catch {
            Descriptor.close(pipeEnds[0]); Descriptor.close(pipeEnds[1])
            throw error
        }
        Descriptor.close(pipeEnds[0])
        Descriptor.writeAll(pipeEnds[1], input)  // a tool that stopped reading: EPIPE (a Swift process ignores SIGPIPE), the copy ends
        Descriptor.close(pipeEnds[1])
        return exitStatus(of: pid) ?? -1
    }
}
