/// A JSON object with its members in file order and its keys exactly as written, repeated
/// keys included.
///
/// Foundation's JSONSerialization on Linux stores objects as Swift dictionaries, whose
/// String keys compare by canonical equivalence: "ά" (U+03AC) and "ά" (U+03B1 U+0301) are
/// one key there, so six of Llama 2's 32000 vocabulary entries vanished. Vocabularies are
/// byte strings, so objects are kept as member lists and read by iterating.
public struct JSONObject: Sendable, Equatable, Sequence {
    public var members: [(key: String, value: JSONValue)]

    public init(members: [(key: String, value: JSONValue)] = []) { self.members = members }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    /// The value of the last member named `key` (lookups are linear: only small objects are
    /// read by key; vocabularies are iterated).
    public subscript(key: String) -> JSONValue? {
        for member in members.reversed() where member.key == key { return member.value }
        return nil
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> { members.makeIterator() }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.count == b.members.count
            && zip(a.members, b.members).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && $0.value == $1.value }
    }
}
