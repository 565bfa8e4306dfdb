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

/// Records sealed and opened per second (padding, AEAD, canonical JSON; no file I/O), median of 5.
func sealOpenThroughput() throws -> (seal: Double, open: Double) {
    let key = try SecureBytes(copying: Array(repeating: 7, count: 32))
    let vaultID = try VaultID.random()
    let now = Date()
    let records = try (0..<2_000).map { index in
        Record(id: try RecordID.random(), serviceIdentifiers: [CredentialServiceIdentifier(identifier: "site\(index).com", type: .domain)],
               user: "user\(index)@example.com", password: "password-\(index)-xyzzy", created: now, modified: now, revision: 1)
    }
    var sealed: [[UInt8]] = []
    var sealRates: [Double] = [], openRates: [Double] = []
    for _ in 0..<5 {
        sealRates.append(Double(records.count) / (try time { sealed = try records.map { try RecordSealing.seal($0, vaultID: vaultID, key: key) } } / 1000))
        openRates.append(Double(records.count) / (try time {
            for (record, bytes) in zip(records, sealed) { _ = try RecordSealing.open(bytes, id: record.id, vaultID: vaultID, key: key) }
        } / 1000))
    }
    return (median(sealRates), median(openRates))
}

/// A password under a site's rule (SPEC.md §12.1), parse and tables included, for the most
/// demanding published rule shape (four requirements, a run limit): median of 200, in ms.
func ruledGeneration() throws -> (rule: Double, published: Double) {
    let text = "minlength: 8; maxlength: 20; max-consecutive: 2; required: lower; required: upper; required: digit; required: [!#$%&*@^]"
    let rule = try (0..<200).map { _ in try time { _ = try PasswordRules(parsing: text).generate() } }
    let quirks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Data/web-quirks").standardized.path
    let published = try (0..<50).map { _ in
        try time { _ = try ChosenPasswordRule(pageRules: nil, host: "www.americanexpress.com", quirks: WebQuirks(directory: quirks)).generate() }
    }
    return (median(rule), median(published))
}

/// What Apple's shared-credentials data costs `list SITE` (SPEC.md §8.1.1): reading and indexing
/// the file (once per process), and a lookup that also reads the sharing sites' host buckets,
/// beside the same lookup without them, on a 1,000-login vault: for discord.com (one sharing
/// site) and for airbnb.co.uk (the largest group, 52 others). Medians of 200, in ms.
func sharedSuggestions() throws -> (load: Double, rows: [(site: String, plain: Double, shared: Double)]) {
    let quirks = WebQuirks(directory: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Data/web-quirks").standardized.path)
    let load = try (0..<50).map { _ in try time { _ = try quirks.sharedCredentials() } }
    let table = try quirks.sharedCredentials()
    let directory = NSTemporaryDirectory() + "coffer-bench-shared-\(getpid())"
    mkdir(directory, 0o700)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let vault = try makeVault(size: 1_000, in: directory)
    for saved in ["airbnb.com", "discordapp.com"] {
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(identifier: saved, type: .domain)], user: "abe", password: "x"))
    }
    let store = vault.identityStore
    return (median(load), try ["discord.com", "airbnb.co.uk"].map { site in
        let request = [CredentialServiceIdentifier(identifier: "https://www.\(site)/", type: .URL)]
        let plain = try (0..<200).map { _ in try time { _ = try store.identityListing(for: request) } }
        let shared = try (0..<200).map { _ in
            try time {
                let count = try store.identityListing(for: request, minimumLevel: .sharedCredential, sharing: table).count
                precondition(count == 1)
            }
        }
        return (site, median(plain), median(shared))
    })
}

/// A warm host's passkey work at 10,000 items (SPEC.md §8.2.1): a registration (key, record,
/// attestation) and an assertion (index lookup, record read, signature), each through the
/// provider as the browser host calls it, for ES256 and EdDSA.
func passkeyOperations() throws -> [(algorithm: String, register: Double, assert: Double)] {
    let directory = NSTemporaryDirectory() + "coffer-bench-passkeys-\(getpid())"
    mkdir(directory, 0o700)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let vault = try makeVault(size: 10_000, in: directory)
    let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
    return try PasskeyAlgorithm.allCases.map { algorithm in
        let rp = "\(algorithm.name.lowercased()).bench.example"
        var counter = 0
        let register = (0..<30).map { _ in
            time {
                counter += 1
                provider.extensionContext.reset()
                provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
                    credentialIdentity: PasskeyCredentialIdentity(
                        relyingPartyIdentifier: rp, userName: "user\(counter)", credentialID: [], userHandle: [UInt8(counter & 0xFF), 1],
                        recordIdentifier: ""),
                    clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [algorithm]))
                guard case .completedPasskeyRegistration? = provider.extensionContext.outcome else { fatalError("no registration") }
            }
        }
        let assert = try (0..<200).map { _ in
            try time {
                let identity = try vault.identityStore.passkeyIdentities(forRelyingParty: rp)[0]
                provider.extensionContext.reset()
                provider.provideCredentialWithoutUserInteraction(for: PasskeyCredentialRequest(
                    credentialIdentity: identity, clientDataHash: Array(repeating: 2, count: 32), userVerificationPreference: .preferred))
                guard case .completedPasskeyAssertion? = provider.extensionContext.outcome else { fatalError("no assertion") }
            }
        }
        return (algorithm.name, median(register), median(assert))
    }
}

/// Issue 56 at 10,000 items, warm: an automatic upgrade (the conditional registration onto a
/// login just filled), a signal that names an offered passkey (the index alone), and one that
/// names a credential no device offers (which reads every record to find hidden passkeys).
func passkeySignals() throws -> (upgrade: Double, indexed: Double, scanning: Double) {
    let directory = NSTemporaryDirectory() + "coffer-bench-signals-\(getpid())"
    mkdir(directory, 0o700)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let vault = try makeVault(size: 10_000, in: directory)
    let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
    let logins = try vault.add((0..<30).map { index in
        RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://upgrade\(index).bench.example/")], user: "u", password: "p")
    })
    let upgrade = logins.enumerated().map { index, login in
        time {
            provider.extensionContext.reset()
            provider.performWithoutUserInteractionIfPossible(passkeyRegistration: PasskeyCredentialRequest(
                credentialIdentity: PasskeyCredentialIdentity(
                    relyingPartyIdentifier: "upgrade\(index).bench.example", userName: "u", credentialID: [], userHandle: [1],
                    recordIdentifier: login.id.hex),
                clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [.es256]))
            guard case .completedPasskeyRegistration? = provider.extensionContext.outcome else { fatalError("no upgrade") }
        }
    }
    let indexed = (0..<30).map { index in
        time { provider.reportPublicKeyCredentialUpdate(forRelyingParty: "upgrade\(index).bench.example", userHandle: [1], newName: "renamed") }
    }
    let scanning = (0..<5).map { index in
        time {
            provider.reportAllAcceptedPublicKeyCredentials(
                forRelyingParty: "upgrade\(index).bench.example", userHandle: [1], acceptedCredentialIDs: [Array(repeating: 9, count: 16)])
        }
    }
    return (median(upgrade), median(indexed), median(scanning))
}

/// The Secret Service's search by attributes (SPEC.md §7.3): one bucket per attribute, so flat in
/// the vault's size. Secret items at each size, locked, the store enabled: median of 200 searches.
func secretServiceSearch(sizes: [Int]) throws -> [(size: Int, search: Double)] {
    try sizes.map { size in
        let directory = NSTemporaryDirectory() + "coffer-bench-secrets-\(getpid())-\(size)"
        mkdir(directory, 0o700)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try makeVault(size: 0, in: directory)
        try CredentialIdentityStore(vault: vault).enable()
        for start in stride(from: 0, to: size, by: 10_000) {
            try vault.add((start..<min(size, start + 10_000)).map { index in
                RecordDraft(serviceIdentifiers: [], user: "", password: "secret-\(index)", name: "Item \(index)", kind: .secret,
                            secretService: SecretServiceMember(attributes: ["service": "svc\(index)", "user": "user\(index % 100)"]))
            })
        }
        let locked = try Vault.open(vault.container, configuration: vault.configuration)
        let store = CredentialIdentityStore(vault: locked)
        let times = try (0..<200).map { round in
            try time {
                let found = try store.secretItems(matching: ["service": "svc\((round * 7919) % size)", "user": "user\((round * 7919) % size % 100)"])
                guard found.count == 1 else { fatalError("search found \(found.count)") }
            }
        }
        return (size, median(times))
    }
}

for row in try secretServiceSearch(sizes: CommandLine.arguments.dropFirst().compactMap { Int($0) }.filter { $0 <= 100_000 }) {
    print(String(format: "Secret Service SearchItems by two attributes, %d secret items, locked: %.3f ms", row.size, row.search))
}

for row in try passkeyOperations() {
    print(String(format: "passkey %@ at 10,000 items (warm): register %.2f ms, assert %.2f ms", row.algorithm, row.register, row.assert))
}

let signals = try passkeySignals()
print(String(format: "passkey at 10,000 items (warm): upgrade %.2f ms; a signal through the index %.2f ms; one that reads every record %.1f ms",
             signals.upgrade, signals.indexed, signals.scanning))

let sharing = try sharedSuggestions()
print(String(format: "shared-credentials data read and indexed: %.3f ms", sharing.load))
for row in sharing.rows {
    print(String(format: "list %@: %.3f ms; with the sharing sites' logins: %.3f ms", row.site, row.plain, row.shared))
}

let generation = try ruledGeneration()
print(String(format: "generate under a rule: %.3f ms; under a published rule, its lookup included: %.3f ms", generation.rule, generation.published))

let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }
var rows: [JSONValue] = []
let throughput = try sealOpenThroughput()
print(String(format: "seal %.0f records/s, open %.0f records/s (in memory, one core)", throughput.seal, throughput.open))
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
    rows.append(["size": .integer(size), "buildSeconds": .double(build), "lookupMs": .double(median(lookups)),
                 "checkedReadMs": .double(median(reads)), "listAllMs": .double(list)])
}
let document: JSONValue = ["sealPerSecond": .double(throughput.seal), "openPerSecond": .double(throughput.open), "sizes": .array(rows)]
try? FileManager.default.createDirectory(atPath: "benchmark-results", withIntermediateDirectories: true)
_ = FileManager.default.createFile(atPath: "benchmark-results/in-process.json", contents: Data(document.canonicalBytes))
