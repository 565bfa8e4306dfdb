import Coffer
import CofferTerminalKit

/// One CLI command: its name, its help, its options and what it does. One type per command,
/// one file per command (swift-argument-parser's shape, without the dependency).
protocol Command: SendableMetatype {
    static var name: String { get }
    static var aliases: [String] { get }
    /// One line for `coffer help`.
    static var summary: String { get }
    /// The usage line(s) after `coffer`.
    static var usage: String { get }
    static var discussion: String { get }
    static var examples: [String] { get }
    /// Options beyond `GlobalOptions.all`.
    static var options: [OptionSpec] { get }
    /// Whether a successful run changes the vault (then `COFFER_AUTOSYNC=1` syncs after it).
    static var changesVault: Bool { get }
    /// Whether this run changes it, when that depends on its options (`generate --save`).
    static func changesVault(_ arguments: ParsedArguments) -> Bool
    /// The words a first operand may be (`team create|add|…`), for completion; empty when the
    /// first operand is free.
    static var subcommands: [String] { get }
    static func run(_ context: CommandContext) throws -> ExitCode
}

extension Command {
    static var aliases: [String] { [] }
    static var discussion: String { "" }
    static var examples: [String] { [] }
    static var options: [OptionSpec] { [] }
    static var changesVault: Bool { false }
    static func changesVault(_ arguments: ParsedArguments) -> Bool { changesVault }
    static var subcommands: [String] { [] }
}
