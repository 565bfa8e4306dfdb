import CofferSupport
/// The members of a JSON object, kept in canonical order (by the bytes of their UTF-8 names,
/// SPEC.md §6.2), each name once.
///
/// Why not `[String: JSONValue]`: names are compared byte for byte here, as RFC 8259 and the
/// Python reference compare them, where a `Dictionary` would merge two names that differ only in
/// Unicode normalisation (`"é"` precomposed and decomposed) and silently keep one value. And the
/// first `Dictionary` keyed by `String` in a process makes the Swift runtime scan every protocol
/// conformance in the binary for `String: Hashable`, about a tenth of a cold `coffer fill`.
/// Objects in the format have a handful of members; lookups are a binary search.
public struct JSONObject: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Member = (name: String, value: JSONValue)

    /// Sorted by `JSONValue.precedesInUTF8` of the names; no name twice.
    public private(set) var members: [Member]

    public init() { members = [] }

    /// From members whose names are already unique and sorted: the parser's path.
    package init(sortedUniqueMembers members: [Member]) { self.members = members }

    /// From a dictionary (record fields, helper output): sorted once.
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { (name: $0.key, value: $0.value) }.sorted { JSONValue.precedesInUTF8($0.name, $1.name) }
    }

    /// Later members of the same name replace earlier ones, as in a dictionary literal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = []
        for (name, value) in elements { self[name] = value }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var names: [String] { members.map(\.name) }

    public subscript(name: String) -> JSONValue? {
        get {
            let position = insertionPoint(of: name)
            return position < members.count && members[position].name.hasSameUTF8(as: name) ? members[position].value : nil
        }
        set {
            let position = insertionPoint(of: name)
            let present = position < members.count && members[position].name.hasSameUTF8(as: name)
            switch (newValue, present) {
            case (let value?, true): members[position].value = value
            case (let value?, false): members.insert((name, value), at: position)
            case (nil, true): members.remove(at: position)
            case (nil, false): break
            }
        }
    }

    /// The members whose names satisfy `isIncluded`, in order.
    public func filter(names isIncluded: (String) -> Bool) -> JSONObject {
        JSONObject(sortedUniqueMembers: members.filter { isIncluded($0.name) })
    }

    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.name.hasSameUTF8(as: $1.name) && $0.value == $1.value }
    }

    /// The first position whose name does not precede `name`.
    private func insertionPoint(of name: String) -> Int {
        var low = 0, high = members.count
        while low < high {
            let middle = (low + high) / 2
            if JSONValue.precedesInUTF8(members[middle].name, name) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
