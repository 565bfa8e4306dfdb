import Glibc

/// The loop of Coffer's socket agents (the SSH agent, the fill agent): one `poll` over the
/// listening socket, the clients and a signalfd, one request at a time (as OpenSSH's ssh-agent).
/// Messages are `uint32 big-endian length ‖ body` frames. A request never outlives a malformed
/// frame: an impossible length is answered with `refusal` and that client is closed (the stream
/// cannot be followed past it); a frame cut short by the end of the connection is dropped.
/// Clients of another uid are closed unanswered.
public final class FramedSocketServer {
    let listener: UnixListener
    let maximumLength: Int
    /// The answer to a frame longer than `maximumLength`, sent before the client is closed.
    let refusal: [UInt8]
    /// Where to say why a request failed (never a secret).
    let log: (String) -> Void
    static let maximumClients = 1000

    private struct Client {
        let descriptor: Int32
        var inbound: [UInt8] = []
        var outbound: [UInt8] = []
        var closing = false
    }

    private var clients: [Client] = []
    /// Where `read` puts what a client sent, reused (and wiped) for every read.
    private var chunk = [UInt8](repeating: 0, count: 65536)

    public init(listener: UnixListener, maximumLength: Int, refusal: [UInt8], log: @escaping (String) -> Void) {
        self.listener = listener
        self.maximumLength = maximumLength
        self.refusal = refusal
        self.log = log
    }

    /// Serves until SIGINT, SIGTERM or SIGHUP, or until `stillNeeded` (asked every
    /// `checkEvery` seconds while idle, and after each answer) says the work is done.
    /// - Parameter respond: a frame's body in, the whole answer (framed) out; never throws.
    public func serve(checkEvery: Int32? = nil, stillNeeded: () -> Bool = { true }, respond: ([UInt8]) -> [UInt8]) throws {
        let signals = try SignalDescriptor(SignalDescriptor.endOfService)
        signal(SIGPIPE, SIG_IGN)
        defer { for client in clients { close(client.descriptor) } }
        while true {
            var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0)]
            for client in clients {
                descriptors.append(pollfd(fd: client.descriptor, events: Int16(client.outbound.isEmpty ? POLLIN : POLLOUT), revents: 0))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), checkEvery.map { $0 * 1000 } ?? -1)
            guard ready >= 0 || errno == EINTR else { throw UnixListenerError.system("poll", errno) }
            if descriptors[0].revents != 0, signals.next() != nil { return }
            if ready == 0 {
                if !stillNeeded() { return }
                continue
            }
            var index = 0, answered = false
            for entry in descriptors.dropFirst(2) {
                defer { index += 1 }
                guard entry.revents != 0 else { continue }
                if entry.revents & Int16(POLLOUT) != 0 { flush(index) } else { answered = receive(index, respond) || answered }
            }
            if descriptors[1].revents != 0 {
                // A new client has usually sent its request by the time it is accepted: reading
                // it now saves a round of poll (and, on an idle CPU, a second wake-up).
                let first = clients.count
                acceptClients()
                for index in first..<clients.count { answered = receive(index, respond) || answered }
            }
            clients.removeAll { client in
                let done = client.closing && client.outbound.isEmpty
                if done { close(client.descriptor) }
                return done
            }
            if answered, clients.allSatisfy({ $0.outbound.isEmpty }), !stillNeeded() { return }
        }
    }

    private func acceptClients() {
        while let (descriptor, uid) = listener.accept() {
            guard uid == geteuid(), clients.count < Self.maximumClients else {
                if uid != geteuid() { log("refused a client of uid \(uid.map(String.init) ?? "unknown")") }
                close(descriptor)
                continue
            }
            clients.append(Client(descriptor: descriptor))
        }
    }

    /// Reads what a client sent and answers each whole frame; whether any was answered.
    private func receive(_ index: Int, _ respond: ([UInt8]) -> [UInt8]) -> Bool {
        let count = read(clients[index].descriptor, &chunk, chunk.count)
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return false }
        guard count > 0 else {
            clients[index].closing = true  // a frame cut short by the end is dropped unanswered
            clients[index].outbound = []
            return false
        }
        clients[index].inbound += chunk[..<count]
        chunk.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, count) } }
        var answered = false
        while clients[index].inbound.count >= 4, !clients[index].closing {
            let length = clients[index].inbound.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            guard length <= maximumLength else {
                log("refused a \(length)-byte message")
                clients[index].outbound += refusal
                clients[index].closing = true
                break
            }
            guard clients[index].inbound.count >= 4 + length else { break }
            var message = Array(clients[index].inbound[4..<4 + length])
            wipe(&clients[index].inbound, count: 4 + length)
            clients[index].outbound += respond(message)
            wipe(&message, count: message.count)
            answered = true
        }
        flush(index)
        return answered
    }

    private func flush(_ index: Int) {
        while !clients[index].outbound.isEmpty {
            let written = clients[index].outbound.withUnsafeBytes { write(clients[index].descriptor, $0.baseAddress!, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EAGAIN { return }
            guard written > 0 else {
                wipe(&clients[index].outbound, count: clients[index].outbound.count)
                clients[index].closing = true
                return
            }
            wipe(&clients[index].outbound, count: written)
        }
    }

    /// Zeroes the first `count` bytes before dropping them: a frame may carry a password.
    private func wipe(_ bytes: inout [UInt8], count: Int) {
        for position in 0..<count { bytes[position] = 0 }
        bytes.removeFirst(count)
    }

    /// `uint32 big-endian length ‖ body`.
    public static func frame(_ body: [UInt8]) -> [UInt8] {
        let length = UInt32(body.count)
        return [UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff), UInt8(length & 0xff)] + body
    }
}
