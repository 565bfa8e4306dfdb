// swift-tools-version:6.0
// Coffer: an encrypted, file-based credential vault toolkit for Linux.
//
// Dependencies point one way, and each arrow below is a target dependency (a back-reference does
// not build: scripts/check-layers): hosts (the CLI, the credential helpers, the browser host, the
// Secret Service, the fill and SSH agents) → the terminal kit and features (import and export,
// backup and verify, the audit) → the host kit (HostSession, pinentry) → CofferProvider →
// CofferTeams (team vaults, a layer on sync) → CofferStore (vault, index, sync) → CofferFormat (the bytes) → CofferModel (the values they carry) → CofferCrypto, CofferSystem (system calls)
// → CofferSupport. `Coffer` re-exports every library layer for an embedder.
//
// Each C library is imported by exactly one folder: CSodium and CCrypto (OpenSSL's libcrypto:
// P-256 only) by CofferCrypto; CKeyutils by CofferStore/Keyring/, CPSL by
// CofferStore/Names/ (registrable domains: the index files identities by site), CIDN2 by CofferModel/Names/, COath (liboath) by CofferStore/OneTimeCodes/, CLinux (prctl, syncfs,
// openat2, renameat2, getrandom) and CProcessShims (signalfd, peer credentials, accept, setsid;
// without _GNU_SOURCE) by CofferSystem, the only importer of Glibc (scripts/check-layers); CZxcvbn by CofferAudit; CZlib and CZstd by CofferMaintenance/Compression/;
// CLibXML2 and CZip by CofferInterchange/Readers/; CQRencode by CofferCLI/QRCode/ (the last
// three loaded on use, see LoadedLibrary); CDBus (libdbus-1) by CofferDBus/ (the Secret Service and polkit).
import PackageDescription

/// libxml2's headers include each other as <libxml/…> from /usr/include/libxml2: every target that
/// sees the `Coffer` module's internals (it and its tests) needs that on the C include path.
let libxml2Headers: [SwiftSetting] = [.unsafeFlags(["-Xcc", "-I/usr/include/libxml2"])]

let package = Package(
    name: "Coffer",
    products: [
        .library(name: "Coffer", targets: ["Coffer"]),
        .executable(name: "coffer", targets: ["coffer"]),
        .executable(name: "git-credential-coffer", targets: ["git-credential-coffer"]),
        .executable(name: "docker-credential-coffer", targets: ["docker-credential-coffer"]),
        .executable(name: "coffer-browser-host", targets: ["coffer-browser-host"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CKeyutils", providers: [.apt(["libkeyutils-dev"])]),
        .systemLibrary(name: "CPSL", pkgConfig: "libpsl", providers: [.apt(["libpsl-dev"])]),
        .systemLibrary(name: "CIDN2", pkgConfig: "libidn2", providers: [.apt(["libidn2-dev", "libunistring-dev"])]),

        .systemLibrary(name: "COath", pkgConfig: "liboath", providers: [.apt(["liboath-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),

        .systemLibrary(name: "CQRencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CZxcvbn", providers: [.apt(["libzxcvbn-dev"])]),
        .systemLibrary(name: "CLibXML2", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CZip", providers: [.apt(["libzip-dev"])]),

        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CProcessShims"),

        // Below everything: small helpers (hex, the environment, display text), naming nothing of
        // Coffer's; and crypto, the only importer of libsodium and libcrypto.
        .target(name: "CofferSupport"),
        .target(name: "CofferCrypto", dependencies: ["CofferSupport", "CSodium", "CCrypto"]),
        // The system-call layer: each call wrapped once (EINTR retried in one place, errors as
        // values), files beneath a directory without links, whole reads and writes, processes,
        // signals, sockets, the terminal; the only importer of Glibc and the Linux shims.
        .target(name: "CofferSystem", dependencies: ["CofferSupport", "CProcessShims", "CLinux"]),
        // The model: credentials, items and records, their members (passkey, Secret Service),
        // identifiers — values without I/O and without crypto; libidn2 for the canonical host
        // names a record's passkey must have.
        .target(name: "CofferModel", dependencies: ["CofferSupport", "CIDN2"]),
        // The bytes of every file: reading and writing them (JSON, the index's encodings, the
        // header), without I/O and without sealing.
        .target(name: "CofferFormat", dependencies: ["CofferSupport", "CofferModel", "CofferCrypto"]),
        // The store: the vault, its index, sync and teams, the keyring's sessions, device state.
        .target(
            name: "CofferStore", dependencies: [
                "CofferSupport", "CofferCrypto", "CofferSystem", "CofferFormat", "CKeyutils", "CPSL", "COath",
            ]),
        // Team vaults: membership chains, team keys, joining, and the team's layer on sync.
        .target(name: "CofferTeams", dependencies: ["CofferStore"]),
        // The provider: Apple's entry points, the identity store over the index, matching,
        // passkeys, the web's rules, the generator.
        .target(name: "CofferProvider", dependencies: ["CofferTeams"]),
        // The host kit: HostSession (every host's one door), pinentry, the AutoFill host.
        .target(name: "CofferHostKit", dependencies: ["CofferProvider"]),
        // Features above the vault, each with the C library only it needs.
        .target(name: "CofferInterchange", dependencies: ["CofferProvider", "CofferMaintenance", "CLibXML2", "CZip"], swiftSettings: libxml2Headers),
        .target(name: "CofferAudit", dependencies: ["CofferProvider", "CZxcvbn"]),
        .target(name: "CofferMaintenance", dependencies: ["CofferProvider", "CZlib", "CZstd"]),
        // Long-lived hosts of the provider.
        .target(name: "CofferFillAgent", dependencies: ["CofferHostKit"]),
        .target(name: "CofferSSHAgent", dependencies: ["CofferHostKit"]),
        // What a host at a terminal shares: arguments, IO, the terminal and the master
        // password's sources, the command context, exit codes. The CLI and the small helpers.
        .target(name: "CofferTerminalKit", dependencies: ["CofferHostKit"]),
        .target(name: "CofferCredentialHelpers", dependencies: ["CofferTerminalKit"]),
        // `import Coffer`: the umbrella an embedder imports, re-exporting every layer.
        .target(
            name: "Coffer", dependencies: [
                "CofferStore", "CofferTeams", "CofferProvider", "CofferHostKit", "CofferInterchange", "CofferAudit", "CofferMaintenance", "CofferFillAgent", "CofferSSHAgent",
            ], swiftSettings: libxml2Headers),
        .target(name: "CofferBrowserHost", dependencies: ["CofferHostKit", "CofferAudit", "CofferDBus"]),
        // The desktop's bus (libdbus-1): the Secret Service's and polkit's (system authentication).
        .target(name: "CofferDBus", dependencies: ["CofferProvider", "CDBus"]),
        .target(name: "CofferSecretService", dependencies: ["CofferHostKit", "CofferInterchange", "CofferDBus"], swiftSettings: libxml2Headers),
        .target(name: "CofferCLI", dependencies: ["Coffer", "CofferTerminalKit", "CofferBrowserHost", "CofferSecretService", "CQRencode"]),
        .executableTarget(name: "coffer", dependencies: ["CofferCLI"]),
        .executableTarget(name: "git-credential-coffer", dependencies: ["CofferCredentialHelpers"]),
        .executableTarget(name: "docker-credential-coffer", dependencies: ["CofferCredentialHelpers"]),
        .executableTarget(name: "coffer-browser-host", dependencies: ["CofferBrowserHost"]),

        .executableTarget(name: "embed-vault", dependencies: ["Coffer"], path: "Examples/EmbedVault"),
        .executableTarget(name: "autofill-tour", dependencies: ["Coffer"], path: "Examples/AutoFillTour"),
        .executableTarget(name: "coffer-bench", dependencies: ["Coffer"], path: "Benchmarks/CofferBench"),

        .executableTarget(name: "coffer-test-writer", dependencies: ["Coffer"], path: "Tests/Helpers/TestWriter"),
        .target(name: "ScratchDirectories", path: "Tests/Helpers/ScratchDirectories"),
        .testTarget(
            name: "CofferTests", dependencies: ["Coffer", "CofferStore", "CofferTeams", "CofferProvider", "CofferFormat", "CofferModel", "CofferSystem", "CofferHostKit", "CofferInterchange", "CofferAudit", "CofferMaintenance", "CofferFillAgent", "CofferSSHAgent", "ScratchDirectories"], resources: [.copy("Vectors")], swiftSettings: libxml2Headers),
        .testTarget(name: "CofferBrowserHostTests", dependencies: ["CofferBrowserHost", "Coffer", "CofferStore", "CofferTeams", "CofferProvider", "CofferFormat", "CofferModel", "CofferHostKit", "CofferInterchange", "CofferAudit", "CofferMaintenance", "CofferFillAgent", "CofferSSHAgent", "ScratchDirectories"], swiftSettings: libxml2Headers),
        .testTarget(
            name: "CofferCLITests", dependencies: ["CofferCLI", "CofferTerminalKit", "CofferCredentialHelpers", "Coffer", "CofferStore", "CofferTeams", "CofferProvider", "CofferFormat", "CofferModel", "CofferHostKit", "CofferInterchange", "CofferAudit", "CofferMaintenance", "CofferFillAgent", "CofferSSHAgent", "CofferBrowserHost", "ScratchDirectories"], swiftSettings: libxml2Headers),
    ]
)
