import CofferProvider
import FoundationEssentials

/// Have I Been Pwned's Pwned Passwords with k-anonymity: only the first 5 hex digits of a
/// password's SHA-1 leave the machine (`GET {base}/range/{prefix}`, answered with every
/// `SUFFIX:COUNT` of that prefix), and the match happens here. Or offline, against the sorted
/// `SHA1:COUNT` list HIBP's downloader writes, searched by bisection without reading it whole.
public enum BreachCheck {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case unavailable(String)
        case badList(String)
        public var description: String {
            switch self {
            case .unavailable(let reason): "the breach check could not run: \(reason)"
            case .badList(let reason): "the hash list is not HIBP's sorted SHA-1 list: \(reason)"
            }
        }
    }

    public static let defaultURL = "https://api.pwnedpasswords.com"

    /// SHA-1 in upper-case hex, as HIBP spells it.
    public static func digest(_ password: String) -> String {
        Hex.encode(SHA1.hash(Array(password.utf8))).uppercased()
    }

    /// How often each password was seen in breaches (0: never), asking the range API once per
    /// distinct prefix. The request runs `curl` (TLS, proxies and CA store as the system has
    /// them); the prefix is all it sends.
    public static func counts(of passwords: [String], base: String = defaultURL, environment: Environment) throws(Failure) -> [Int] {
        let digests = passwords.map(digest)
        var answers: [String: [Substring]] = [:]
        for prefix in Set(digests.map { String($0.prefix(5)) }).sorted() {
            let url = base.hasSuffix("/") ? base + "range/" + prefix : base + "/range/" + prefix
            answers[prefix] = try fetch(url, environment: environment).split(whereSeparator: \.isNewline)
        }
        return digests.map { digest in
            let suffix = digest.dropFirst(5)
            for line in answers[String(digest.prefix(5))] ?? [] {
                let parts = line.split(separator: ":")
                if parts.count == 2, parts[0].uppercased() == suffix { return Int(parts[1].trimmingSpaces()) ?? 1 }
            }
            return 0
        }
    }

    private static func fetch(_ url: String, environment: Environment) throws(Failure) -> String {
        do {
            let curl = try ChildProcess(["curl", "--silent", "--show-error", "--fail", "--max-time", "20", "--header", "Add-Padding: true", url], environment: environment)
            curl.closeInput()
            let output = try curl.readToEnd(limit: 4 << 20)
            let status = curl.wait()
            guard status == 0 else { throw Failure.unavailable("curl exited \(status) for \(url)") }
            return String(decoding: output, as: UTF8.self)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .unavailable("\(error) (is curl installed?)")
        }
    }

    /// Counts from a local copy of the list (`SHA1:COUNT` lines, sorted by hash), each found by
    /// bisection over byte offsets: a 40 GB file costs a few dozen reads per password.
    public static func counts(of passwords: [String], inFile path: String) throws(Failure) -> [Int] {
        let file: OpenedFile
        do {
            file = try FileSystem.standard.openUserFileForReading(path)
        } catch .wrongFileType {
            throw .badList("\(path) is not a regular file")
        } catch {
            throw .badList("cannot open \(path)")
        }
        var results: [Int] = []
        for password in passwords {
            results.append(try search(digest(password), in: file))
        }
        return results
    }

    /// The first full line starting at or after `offset`, with where the next line starts.
    private static func line(at offset: Int, in file: OpenedFile) -> (text: String, next: Int)? {
        var start = offset
        if start > 0 {
            // Skip to the start of the next line.
            let skipped = file.read(upTo: 256, at: start - 1)
            guard let newline = skipped.firstIndex(of: 0x0A) else { return nil }
            start += newline
        }
        guard start < file.size else { return nil }
        let bytes = file.read(upTo: 256, at: start)
        guard !bytes.isEmpty else { return nil }
        let end = bytes.firstIndex(of: 0x0A) ?? bytes.count
        return (String(decoding: bytes[..<end], as: UTF8.self).trimmingWhitespace, start + end + 1)
    }

    private static func search(_ digest: String, in file: OpenedFile) throws(Failure) -> Int {
        var low = 0, high = file.size
        while low < high {
            let middle = (low + high) / 2
            guard let (text, next) = line(at: middle, in: file) else { high = middle; continue }
            let hash = String(text.prefix(40)).uppercased()
            guard hash.count == 40, hash.allSatisfy(\.isHexDigit) else { throw .badList("a line without a SHA-1 near byte \(middle)") }
            if hash == digest { return Int(text.split(separator: ":").last ?? "") ?? 1 }
            if hash < digest { low = next } else { high = middle }
        }
        // The first line of the file (bisection never reads it as "the line after").
        if let (text, _) = line(at: 0, in: file), text.uppercased().hasPrefix(digest) {
            return Int(text.split(separator: ":").last ?? "") ?? 1
        }
        return 0
    }
}
