import Foundation
import QBSupport

/// SentencePiece's `tokenizer.model` (a `ModelProto` protocol buffer), read without a
/// protobuf library: only the fields a BPE model needs.
///
/// - `pieces` (1): piece (1, string), score (2, float), type (3, enum).
/// - `trainer_spec` (2): model_type (3; BPE is 2), byte_fallback (35), unk/bos/eos ids
///   (40, 41, 42; -1 = none).
/// - `normalizer_spec` (3): name (1), precompiled_charsmap (2), add_dummy_prefix (3),
///   remove_extra_whitespaces (4), escape_whitespaces (5).
///
/// Unigram models and normalizations other than `identity` (NFKC tables, whitespace
/// collapsing) are rejected as unsupported: encoding them needs machinery this reader does
/// not have, and approximating it would silently give other ids.
public enum SentencePieceModelFile {
    /// Reads a SentencePiece BPE tokenizer.model. BOS is added when the model has one;
    /// `eosTokenIDs` replaces the model's EOS as the ids that end generation.
    public static func tokenizer(contentsOf url: URL, eosTokenIDs: Set<TokenID>? = nil) throws -> SentencePieceTokenizer {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TokenizerError.unreadable(path: url.path, reason: FoundationErrorText.reason(error))
        }
        return try tokenizer(data: data, path: url.path, eosTokenIDs: eosTokenIDs)
    }

    /// `tokenizer(contentsOf:)` from the file's bytes; `path` only names the source in errors.
    public static func tokenizer(data: Data, path: String, eosTokenIDs: Set<TokenID>? = nil) throws -> SentencePieceTokenizer {
        let bytes = [UInt8](data)
        var pieces: [String] = []
        var scores: [Float] = []
        var types: [SentencePieceTokenizer.TokenType] = []
        var modelType: UInt64 = 1  // UNIGRAM, the format's default
        var unk: Int64 = 0, bos: Int64 = 1, eos: Int64 = 2
        var normalizerName = "nmt_nfkc"  // the format's default
        var charsmap = 0
        var addDummyPrefix = true
        var removeExtraWhitespaces = true
        var escapeWhitespaces = true

        var top = ProtoReader(bytes: bytes[...], path: path, field: "ModelProto")
        while let (number, value) = try top.next() {
            switch (number, value) {
            case (1, .bytes(let message)):
                let index = pieces.count
                var r = ProtoReader(bytes: message, path: path, field: "pieces[\(index)]")
                var piece: String?
                var score: Float = 0
                var type: SentencePieceTokenizer.TokenType = .normal
                while let (n, v) = try r.next() {
                    switch (n, v) {
                    case (1, .bytes(let b)):
                        guard let s = String(validating: b, as: UTF8.self) else {
                            throw TokenizerError.malformed(path: path, field: "pieces[\(index)].piece", reason: "not valid UTF-8")
                        }
                        piece = s
                    case (2, .fixed32(let bits)): score = Float(bitPattern: bits)
                    case (3, .varint(let t)):
                        guard let t = SentencePieceTokenizer.TokenType(rawValue: Int32(truncatingIfNeeded: t)) else {
                            throw TokenizerError.malformed(path: path, field: "pieces[\(index)].type", reason: "unknown type \(t)")
                        }
                        type = t
                    default: break
                    }
                }
                guard let piece else { throw TokenizerError.malformed(path: path, field: "pieces[\(index)].piece", reason: "missing") }
                pieces.append(piece)
                scores.append(score)
                types.append(type)
            case (2, .bytes(let message)):
                var r = ProtoReader(bytes: message, path: path, field: "trainer_spec")
                while let (n, v) = try r.next() {
                    guard case .varint(let x) = v else { continue }
                    switch n {
                    case 3: modelType = x
                    case 40: unk = Int64(Int32(truncatingIfNeeded: x))
                    case 41: bos = Int64(Int32(truncatingIfNeeded: x))
                    case 42: eos = Int64(Int32(truncatingIfNeeded: x))
                    default: break
                    }
                }
            case (3, .bytes(let message)):
                var r = ProtoReader(bytes: message, path: path, field: "normalizer_spec")
                while let (n, v) = try r.next() {
                    switch (n, v) {
                    case (1, .bytes(let b)): normalizerName = String(decoding: b, as: UTF8.self)
                    case (2, .bytes(let b)): charsmap = b.count
                    case (3, .varint(let x)): addDummyPrefix = x != 0
                    case (4, .varint(let x)): removeExtraWhitespaces = x != 0
                    case (5, .varint(let x)): escapeWhitespaces = x != 0
                    default: break
                    }
                }
            default:
                break
            }
        }
        guard !pieces.isEmpty else { throw TokenizerError.malformed(path: path, field: "pieces", reason: "none") }
        guard modelType == 2 else {
            let name = [1: "Unigram", 3: "word", 4: "char"][modelType] ?? "type \(modelType)"
            throw TokenizerError.unsupported(path: path, feature: "SentencePiece \(name) model (only BPE is read)")
        }
        guard (normalizerName == "identity" || charsmap == 0), !removeExtraWhitespaces, escapeWhitespaces else {
            throw TokenizerError.unsupported(
                path: path,
                feature: "SentencePiece normalization '\(normalizerName)' (remove_extra_whitespaces \(removeExtraWhitespaces), escape_whitespaces \(escapeWhitespaces)); only identity is read")
        }
        func id(_ v: Int64, _ name: String) throws -> TokenID? {
            guard v >= 0 else { return nil }
            guard v < Int64(pieces.count) else {
                throw TokenizerError.malformed(path: path, field: "trainer_spec.\(name)", reason: "\(v) is outside the \(pieces.count) pieces")
            }
            return TokenID(v)
        }
        let bosID = try id(bos, "bos_id")
        let eosID = try id(eos, "eos_id")
        let vocabulary = SentencePieceTokenizer.Vocabulary(
            pieces: pieces, scores: scores, types: types, bos: bosID, eos: eosTokenIDs ?? Set([eosID].compactMap { $0 }),
            unknown: try id(unk, "unk_id"), addsBOS: bosID != nil, addsEOS: false, addSpacePrefix: addDummyPrefix,
            mergesIntoAnyPiece: false)
        return try SentencePieceTokenizer(vocabulary: vocabulary, path: path)
    }

    /// Whether `data` starts like a ModelProto: field 1 (a piece message) whose own first
    /// field is 1 (the piece string).
    public static func isModelFile(_ data: Data) -> Bool {
        let head = [UInt8](data.prefix(16))
        guard head.count >= 4, head[0] == 0x0A else { return false }
        var i = 1
        while i < head.count && head[i] >= 0x80 { i += 1 }  // the message length
        i += 1
        return i < head.count && head[i] == 0x0A
    }
}

/// Protocol buffer wire format, read field by field; every length is checked against the
/// bytes left, so a corrupt file is an error, never a trap.
struct ProtoReader {
    enum Value {
        case varint(UInt64)
        case fixed64(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed32(UInt32)
    }

    let bytes: ArraySlice<UInt8>
    let path: String
    let field: String
    private var i: Int

    init(bytes: ArraySlice<UInt8>, path: String, field: String) {
        self.bytes = bytes
        self.path = path
        self.field = field
        i = bytes.startIndex
    }

    private func bad(_ reason: String) -> TokenizerError {
        .malformed(path: path, field: field, reason: "\(reason) at byte \(i)")
    }

    private mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard i < bytes.endIndex else { throw bad("truncated varint") }
            let b = bytes[i]
            i += 1
            guard shift < 64 else { throw bad("varint too long") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    /// The next field (number, value), or nil at the end.
    mutating func next() throws -> (UInt64, Value)? {
        guard i < bytes.endIndex else { return nil }
        let key = try varint()
        let number = key >> 3
        switch key & 7 {
        case 0:
            return (number, .varint(try varint()))
        case 1:
            guard bytes.endIndex - i >= 8 else { throw bad("truncated fixed64") }
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
            i += 8
            return (number, .fixed64(v))
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - i) else { throw bad("field \(number) of \(length) bytes runs past the end") }
            let start = i
            i += Int(length)
            return (number, .bytes(bytes[start..<i]))
        case 5:
            guard bytes.endIndex - i >= 4 else { throw bad("truncated fixed32") }
            var v: UInt32 = 0
            for k in 0..<4 { v |= UInt32(bytes[i + k]) << (8 * UInt32(k)) }
            i += 4
            return (number, .fixed32(v))
        default:
            throw bad("unsupported wire type \(key & 7)")
        }
    }
}
