import CofferSystem
import Glibc
import XCTest

/// The system-call layer: a signal in the middle of a read is retried in its one place, and
/// each way a whole read or write can end is told apart.
final class DescriptorTests: XCTestCase {
    /// A blocking read interrupted by a signal whose handler does not restart calls (EINTR) goes
    /// on and returns every byte.
    func testAReadInterruptedByASignalGoesOn() throws {
        var pipeEnds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&pipeEnds), 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0  // no SA_RESTART: the read fails with EINTR
        var previous = sigaction()
        sigaction(SIGUSR2, &action, &previous)
        defer { sigaction(SIGUSR2, &previous, nil) }
        let reader = pthread_self()
        let writeEnd = pipeEnds[1]
        let writer = Thread {
            usleep(100_000)
            pthread_kill(reader, SIGUSR2)  // while the reader waits in read()
            usleep(100_000)
            Descriptor.writeAll(writeEnd, Array("hello".utf8))
        }
        writer.start()
        XCTAssertEqual(Descriptor.readExactly(pipeEnds[0], count: 5), Array("hello".utf8))
    }

    func testEachEndOfAWholeReadIsToldApart() throws {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        defer { close(ends[0]) }
        var buffer = [UInt8](repeating: 0, count: 4)
        let read = { (deadline: ContinuousClock.Instant?) in buffer.withUnsafeMutableBytes { Descriptor.readExactly(ends[0], into: $0, before: deadline) } }
        XCTAssertEqual(read(.now + .milliseconds(50)), .timedOut, "a peer that sends nothing is given up on at the deadline")
        Descriptor.writeAll(ends[1], [1, 2, 3, 4])
        XCTAssertEqual(read(nil), .complete)
        XCTAssertEqual(buffer, [1, 2, 3, 4])
        Descriptor.writeAll(ends[1], [5, 6])
        shutdown(ends[1], Int32(SHUT_WR))
        XCTAssertEqual(read(nil), .truncated, "a message cut short")
        XCTAssertEqual(read(nil), .endOfInput, "then a clean end")
        close(ends[1])
        XCTAssertEqual(Descriptor.writeAll(ends[0], [1], noSignal: true), Errno(EPIPE), "a peer gone is an error, not SIGPIPE")
    }

    func testAConnectTellsNobodyFromSomeone() throws {
        let directory = NSTemporaryDirectory() + "coffer-socket-\(getpid())"
        mkdir(directory, 0o700)
        defer { rmdir(directory) }
        let path = directory + "/agent"
        XCTAssertEqual(UnixSocket.connect(to: path, timeoutMilliseconds: 100), .absent)
        let listener = try UnixListener(path: path)
        defer { unlink(path) }
        guard case .connected(let fd) = UnixSocket.connect(to: path, timeoutMilliseconds: 100) else { return XCTFail("not connected") }
        defer { close(fd) }
        XCTAssertEqual(UnixSocket.peerUID(fd), geteuid(), "the kernel's word on who listens")
        _ = listener
    }
}
