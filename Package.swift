// swift-tools-version:6.0
// Coffer: an encrypted, file-based credential vault toolkit for Linux.
//
// Dependencies point one way: hosts (CLI, helpers, examples) → provider → identity store →
// vault and records → format → crypto. Each C library is imported by exactly one folder:
// CSodium and CCrypto (OpenSSL's libcrypto: P-256 only) by the CofferCrypto target, CKeyutils by Keyring/, CPSL and CIDN2 by ServiceMatching/,
// COath (liboath) by OneTimeCodes/; CZxcvbn by Audit/; CZlib and CZstd by Compression/ (backups); CLibXML2 and CZip by Interchange/Readers/; CQRencode by
// CofferCLI/QRCode/ (the last three types only: loaded on use, see LoadedLibrary),
// CLinux (header-only shims for prctl and syncfs) by Process/ and Storage/FileSystem.swift;
// CProcessShims (signalfd, peer credentials, accept, setsid; without _GNU_SOURCE) by Process/.
// CDBus (libdbus-1) by CofferSecretService/Bus/: the Secret Service is a host of its own target.
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
        .target(name: "CofferCrypto", dependencies: ["CSodium", "CCrypto"]),
        .target(
            name: "Coffer", dependencies: [
                "CofferSupport", "CofferCrypto", "CKeyutils", "CPSL", "CIDN2", "COath", "CZxcvbn", "CLibXML2", "CZip", "CLinux", "CProcessShims", "CZlib", "CZstd",
            ],
            swiftSettings: libxml2Headers),
        .target(name: "CofferBrowserHost", dependencies: ["Coffer"]),
        .target(name: "CofferSecretService", dependencies: ["Coffer", "CDBus"]),
        .target(name: "CofferCLI", dependencies: ["Coffer", "CofferBrowserHost", "CofferSecretService", "CQRencode"]),
        .executableTarget(name: "coffer", dependencies: ["CofferCLI"]),
        .executableTarget(name: "git-credential-coffer", dependencies: ["CofferCLI", "Coffer"]),
        .executableTarget(name: "docker-credential-coffer", dependencies: ["CofferCLI", "Coffer"]),
        .executableTarget(name: "coffer-browser-host", dependencies: ["CofferBrowserHost"]),

        .executableTarget(name: "embed-vault", dependencies: ["Coffer"], path: "Examples/EmbedVault"),
        .executableTarget(name: "autofill-tour", dependencies: ["Coffer"], path: "Examples/AutoFillTour"),
        .executableTarget(name: "coffer-bench", dependencies: ["Coffer"], path: "Benchmarks/CofferBench"),

        .executableTarget(name: "coffer-test-writer", dependencies: ["Coffer"], path: "Tests/Helpers/TestWriter"),
        .target(name: "ScratchDirectories", path: "Tests/Helpers/ScratchDirectories"),
        .testTarget(
            name: "CofferTests", dependencies: ["Coffer", "ScratchDirectories"], resources: [.copy("Vectors")], swiftSettings: libxml2Headers),
        .testTarget(name: "CofferBrowserHostTests", dependencies: ["CofferBrowserHost", "Coffer", "ScratchDirectories"], swiftSettings: libxml2Headers),
        .testTarget(
            name: "CofferCLITests", dependencies: ["CofferCLI", "Coffer", "CofferBrowserHost", "ScratchDirectories"], swiftSettings: libxml2Headers),
    ]
)
