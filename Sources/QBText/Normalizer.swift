/// A tokenizer.json normalizer, applied to UTF-8 bytes.
///
/// Only what SentencePiece-style exports use is supported (`Prepend` and `Replace` with a
/// literal pattern, alone or in a `Sequence`): the older Llama 2 exports put their `▁`
/// handling here. Unicode normalization forms (NFC, NFKC) and regex replacements are
/// rejected when the file is read rather than approximated.
struct Normalizer: Sendable, Equatable {
    enum Step: Sendable, Equatable {
        /// `Prepend`: the bytes go in front of any non-empty text.
        case prepend([UInt8])
        /// `Replace` with a `String` pattern: every non-overlapping occurrence, left to right.
        case replace(pattern: [UInt8], content: [UInt8])
    }

    let steps: [Step]

    /// How many times longer (plus a constant for prepends) normalized text may be than
    /// its input; tokenizer files whose steps could grow it more are refused.
    static let maximumGrowth = 16

    /// The most the steps can multiply a text's length by (each Replace by its content's
    /// length over its pattern's).
    var worstGrowth: Double {
        var g = 1.0
        for step in steps {
            if case .replace(let pattern, let content) = step, !pattern.isEmpty {
                g *= max(1, Double(content.count) / Double(pattern.count))
            }
        }
        return g
    }

    /// Appends the normalized form of `input` to `out`.
    func normalize(_ input: ArraySlice<UInt8>, into out: inout [UInt8]) {
        var current = Array(input)
        var next: [UInt8] = []
        for step in steps {
            next.removeAll(keepingCapacity: true)
            switch step {
            case .prepend(let prefix):
                guard !current.isEmpty else { continue }
                next.reserveCapacity(prefix.count + current.count)
                next.append(contentsOf: prefix)
                next.append(contentsOf: current)
            case .replace(let pattern, let content):
                Self.replace(current, pattern, content, into: &next)
            }
            swap(&current, &next)
        }
        out.append(contentsOf: current)
    }

    /// The normalized form of a whole string (for added tokens declared `normalized`).
    func normalize(_ text: String) -> String {
        var out: [UInt8] = []
        normalize(Array(text.utf8)[...], into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func replace(_ input: [UInt8], _ pattern: [UInt8], _ content: [UInt8], into out: inout [UInt8]) {
        guard let first = pattern.first else {
            out.append(contentsOf: input)
            return
        }
        out.reserveCapacity(input.count + input.count / 4)
        var i = 0
        let n = input.count
        let m = pattern.count
        while i < n {
            if input[i] == first && i + m <= n && input[i..<(i + m)].elementsEqual(pattern) {
                out.append(contentsOf: content)
                i += m
            } else {
                out.append(input[i])
                i += 1
            }
        }
    }
}
