/// How closely a request must match one of a record's services before a host may release the
/// password without a person choosing it (SPEC.md §8.1): the per-record "URI match detection"
/// Bitwarden and KeePassXC give their users. Stored in the record (`match`) and, as one byte, in
/// every identity of the index.
public enum MatchMode: String, CaseIterable, Sendable {
    /// Same registrable domain (eTLD+1) is enough: `login.example.com` fills on `www.example.com`.
    case site
    /// Same host (and port): the default.
    case host
    /// Same scheme, host, port and path.
    case exact
    /// Never suggested for a service and never filled automatically; reachable by name or id.
    case never
}
