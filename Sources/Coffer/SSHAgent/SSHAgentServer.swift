import Glibc

/// The agent's loop: one `poll` over the listening socket, the clients and a signalfd, one
/// request at a time (as OpenSSH's ssh-agent). A pinentry prompt holds the others until it is
/// answered; a request never outlives a malformed frame: an impossible length is answered with
/// failure and that client is closed, anything else malformed is answered with failure and the
/// client may go on.
public final class SSHAgentServer {
    let listener: UnixListener
    let keys: SSHAgentKeys
    /// Where to say why a request failed (never a key or anything signed).
    let log: (String) -> Void
    static let maximumClients = 1000

    private struct Client {
        let descriptor: Int32
        var inbound: [UInt8] = []
        var outbound: [UInt8] = []
        var closing = false
    }

    private var clients: [Client] = []

    public init(listener: UnixListener, keys: SSHAgentKeys, log: @escaping (String) -> Void) {
        self.listener = listener
        self.keys = keys
        self.log = log
    }

    /// Serves until SIGINT, SIGTERM or SIGHUP.
    public func serve() throws {
        let signals = try SignalDescriptor([SIGINT, SIGTERM, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
        defer { for client in clients { close(client.descriptor) } }
        while true {
            var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0)]
            for client in clients {
                descriptors.append(pollfd(fd: client.descriptor, events: Int16(client.outbound.isEmpty ? POLLIN : POLLOUT), revents: 0))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 || errno == EINTR else { throw UnixListenerError.system("poll", errno) }
            if signals.next() != nil { return }
            if descriptors[1].revents != 0 { acceptClients() }
            var index = 0
            for entry in descriptors.dropFirst(2) {
                defer { index += 1 }
                guard entry.revents != 0 else { continue }
                if entry.revents & Int16(POLLOUT) != 0 { flush(index) } else { receive(index) }
            }
            clients.removeAll { client in
                let done = client.closing && client.outbound.isEmpty
                if done { close(client.descriptor) }
                return done
            }
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

    private func receive(_ index: Int) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(clients[index].descriptor, &chunk, chunk.count)
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
        guard count > 0 else {
            clients[index].closing = true  // a frame cut short by the end is dropped unanswered
            clients[index].outbound = []
            return
        }
        clients[index].inbound += chunk[..<count]
        while clients[index].inbound.count >= 4, !clients[index].closing {
            let length = clients[index].inbound.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            guard length <= SSHAgentRequest.maximumLength else {
                log("refused a \(length)-byte message")
                clients[index].outbound += SSHAgentReply.failure
                clients[index].closing = true  // the stream cannot be followed past it
                break
            }
            guard clients[index].inbound.count >= 4 + length else { break }
            let message = Array(clients[index].inbound[4..<4 + length])
            clients[index].inbound.removeFirst(4 + length)
            clients[index].outbound += respond(to: message)
        }
        flush(index)
    }

    private func flush(_ index: Int) {
        while !clients[index].outbound.isEmpty {
            let written = clients[index].outbound.withUnsafeBytes { write(clients[index].descriptor, $0.baseAddress!, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EAGAIN { return }
            guard written > 0 else {
                clients[index].outbound = []
                clients[index].closing = true
                return
            }
            clients[index].outbound.removeFirst(written)
        }
    }

    /// One answer, never a thrown error: whatever goes wrong is `SSH_AGENT_FAILURE`.
    func respond(to message: [UInt8]) -> [UInt8] {
        let request: SSHAgentRequest
        do {
            request = try message.withUnsafeBytes { buffer throws(SSHWireError) in try SSHAgentRequest(buffer) }
        } catch {
            log("a malformed request: \(error)")
            return SSHAgentReply.failure
        }
        switch request {
        case .requestIdentities:
            return SSHAgentReply.identities(keys.identities().map { ($0.key, $0.comment) })
        case .sign(let blob, let data, _):
            do {
                return SSHAgentReply.signature(try keys.sign(blob: blob, data: data))
            } catch {
                log("refused a signature: \(error)")
                return SSHAgentReply.failure
            }
        case .unsupported:
            return SSHAgentReply.failure
        }
    }
}
