import CofferProvider
import CofferHostKit

/// The SSH agent: `FramedSocketServer`'s loop (one request at a time, as OpenSSH's ssh-agent;
/// a pinentry prompt holds the others until it is answered) with the agent protocol's answers.
/// An impossible length is answered with failure and that client is closed, anything else
/// malformed is answered with failure and the client may go on.
public final class SSHAgentServer {
    let listener: UnixListener
    let keys: SSHAgentKeys
    /// Where to say why a request failed (never a key or anything signed).
    let log: (String) -> Void

    public init(listener: UnixListener, keys: SSHAgentKeys, log: @escaping (String) -> Void) {
        self.listener = listener
        self.keys = keys
        self.log = log
    }

    /// Serves until SIGINT, SIGTERM or SIGHUP.
    public func serve() throws {
        let server = FramedSocketServer(listener: listener, maximumLength: SSHAgentRequest.maximumLength, refusal: SSHAgentReply.failure, log: log)
        try server.serve(respond: respond(to:))
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
