// coffer-bench: measures Coffer in-process. Run with `swift run -c release coffer-bench [SIZES…]`.
// Timings live here, never in tests. Vaults are built through the bulk path with libsodium's
// minimum KDF cost (the cost of unlocking is not what these numbers are about).
import Coffer
import Foundation

func median(_ samples: [Double]) -> Double {
    let sorted = samples.sorted()
    return sorted[sorted.count / 2]
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

func makeVault(size: Int, in directory: String) throws -> Vault {
    let configuration = VaultConfiguration(kdfPolicy: .relaxedForTesting, stateDirectory: directory + "/state")
    let vault = try Vault.create(
        in: GroupContainer(path: directory + "/vault"), masterPassword: SecureBytes(copying: Array("bench".utf8)),
        kdf: KDFPolicy.testingParameters, configuration: configuration)
    let batch = 10_000
    for start in stride(from: 0, to: size, by: batch) {
        let drafts = (start..<min(size, start + batch)).map { index in
            RecordDraft(
                serviceIdentifiers: [CredentialServiceIdentifier(identifier: "site\(index).com", type: .domain)],
                user: "user\(index)@example.com", password: "password-\(index)")
        }
        try vault.add(drafts)
    }
    return vault
}

let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }
var rows: [[String: Any]] = []
print("size      build(s)  lookup(ms)  checked read(ms)  list all(ms)")
for size in sizes.isEmpty ? [1_000, 100_000] : sizes {
    let directory = NSTemporaryDirectory() + "coffer-bench-\(getpid())-\(size)"
    mkdir(directory, 0o700)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var vault: Vault!
    let build = try time { vault = try makeVault(size: size, in: directory) } / 1000
    let store = vault.identityStore
    var lookups: [Double] = [], reads: [Double] = []
    for run in 0..<200 {
        let index = (run * 7919) % size
        var found: [RankedIdentity] = []
        lookups.append(try time {
            found = try store.credentialIdentities(for: [CredentialServiceIdentifier(identifier: "https://www.site\(index).com/login", type: .URL)])
        })
        guard let id = try? RecordID(hex: found.first?.identity.recordIdentifier ?? "") else { fatalError("lookup found nothing") }
        reads.append(try time { _ = try vault.record(withID: id) })
    }
    var count = 0
    let list = try time { try store.forEachCredentialIdentity { _ in count += 1 } }
    precondition(count == size)
    print(String(format: "%-9d %-9.1f %-11.3f %-17.3f %.1f", size, build, median(lookups), median(reads), list))
    rows.append(["size": size, "buildSeconds": build, "lookupMs": median(lookups), "checkedReadMs": median(reads), "listAllMs": list])
}
if let data = try? JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]) {
    FileManager.default.createFile(atPath: "benchmark-results/in-process.json", contents: nil)
    try? FileManager.default.createDirectory(atPath: "benchmark-results", withIntermediateDirectories: true)
    try? data.write(to: URL(fileURLWithPath: "benchmark-results/in-process.json"))
}
