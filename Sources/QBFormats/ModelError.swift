/// Everything that can be wrong with a model on disk. Each case names the file and the
/// tensor or field at fault, so the message alone says what to fix.
public enum ModelError: Error, CustomStringConvertible, Equatable {
    case notFound(path: String)
    case unreadable(path: String, reason: String)
    case truncated(path: String, item: String, needed: Int, available: Int)
    case badMagic(path: String, found: String)
    case unsupportedVersion(path: String, version: Int)
    case invalidField(path: String, field: String, reason: String)
    case missingTensor(path: String, tensor: String)
    case shapeMismatch(path: String, tensor: String, expected: [Int], found: [Int])
    case unsupportedDType(path: String, tensor: String, dtype: String)
    case invalidTensor(path: String, tensor: String, reason: String)
    case invalidToken(id: Int, vocabularySize: Int)
    case contextFull(needed: Int, capacity: Int)

    public var description: String {
        switch self {
        case .notFound(let path): return "\(path): no such file or directory"
        case .unreadable(let path, let reason): return "\(path): cannot read: \(reason)"
        case .truncated(let path, let item, let needed, let available):
            return "\(path): truncated at \(item): needs \(needed) bytes, file has \(available)"
        case .badMagic(let path, let found): return "\(path): not a recognised model file (magic \(found))"
        case .unsupportedVersion(let path, let version): return "\(path): unsupported format version \(version)"
        case .invalidField(let path, let field, let reason): return "\(path): invalid \(field): \(reason)"
        case .missingTensor(let path, let tensor): return "\(path): missing tensor \(tensor)"
        case .shapeMismatch(let path, let tensor, let expected, let found):
            return "\(path): tensor \(tensor) has shape \(found), config needs \(expected)"
        case .unsupportedDType(let path, let tensor, let dtype):
            return "\(path): tensor \(tensor) has unsupported dtype \(dtype)"
        case .invalidTensor(let path, let tensor, let reason): return "\(path): tensor \(tensor): \(reason)"
        case .invalidToken(let id, let vocabularySize):
            return "token id \(id) is outside the vocabulary (0..<\(vocabularySize))"
        case .contextFull(let needed, let capacity):
            return "context full: \(needed) positions needed, the KV cache holds \(capacity)"
        }
    }
}
