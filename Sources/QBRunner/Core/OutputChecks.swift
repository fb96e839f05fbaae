import Foundation
import QBGeneration
import QBText

/// The pass/fail checks on a generation's output. Each returns a `CheckResult` whose
/// detail says what was seen when it fails.
public enum OutputChecks {
    /// The text the generated ids spell: their bytes (after the prompt's last id, as the
    /// stream renders them, special tokens left out as the stream leaves them out) decoded
    /// as a whole, invalid sequences as U+FFFD.
    public static func spelledText(_ tokens: [TokenID], after previous: TokenID?, tokenizer: any Tokenizer) -> String {
        var bytes: [UInt8] = []
        var prev = previous
        for t in tokens {
            if !tokenizer.isSpecial(t) { bytes += tokenizer.bytes(for: t, after: prev) }
            prev = t
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `valid_utf8`: the streamed text is exactly what the ids spell, cut at the stop string
    /// when one matched. Streaming therefore never split a character (a split would show as
    /// U+FFFD that the whole decode does not have) and never invented or dropped text. Any
    /// U+FFFD left comes from bytes the model itself produced; the detail counts them.
    public static func textMatchesTokens(
        text: String, spelled: String, finish: FinishReason, stopString: String?
    ) -> CheckResult {
        let replacements = text.unicodeScalars.filter { $0 == "\u{FFFD}" }.count
        let note = replacements > 0 ? " (\(replacements) U+FFFD from invalid bytes the model produced)" : ""
        if finish == .stopString, let stop = stopString {
            let ok = spelled.utf8.starts(with: Array(text.utf8) + Array(stop.utf8))
            return CheckResult("valid_utf8", ok, ok ? "text is the spelled output up to the stop string\(note)"
                : "text \(quote(text)) is not the spelled output \(quote(spelled)) cut at \(quote(stop))")
        }
        let ok = text == spelled
        return CheckResult("valid_utf8", ok, ok ? "text equals the decode of the generated ids\(note)"
            : "streamed \(quote(text)) but the ids spell \(quote(spelled))")
    }

    /// `no_stop_leak`: no stop string appears in the text; a stop finish names one of the
    /// requested strings; and a generation that did not stop on one never spelled one
    /// (which would be a missed stop).
    public static func stopStrings(
        text: String, spelled: String, stops: [String], finish: FinishReason, stopString: String?
    ) -> CheckResult {
        if let leaked = stops.first(where: { text.utf8.contains(subsequence: $0.utf8) }) {
            return CheckResult("no_stop_leak", false, "stop string \(quote(leaked)) appears in the output")
        }
        if finish == .stopString {
            guard let s = stopString, stops.contains(s) else {
                return CheckResult("no_stop_leak", false, "finished on a stop string, but \(quote(stopString ?? "nil")) was not requested")
            }
            return CheckResult("no_stop_leak", true, "stopped on \(quote(s)), which is not shown")
        }
        if let missed = stops.first(where: { spelled.utf8.contains(subsequence: $0.utf8) }) {
            return CheckResult("no_stop_leak", false, "the output spells \(quote(missed)) but generation did not stop (\(finish.rawValue))")
        }
        return CheckResult("no_stop_leak", true, stops.isEmpty ? "no stop strings" : "no stop string occurred")
    }

    /// `finish_reason`: one of the expected reasons.
    public static func finishReason(_ actual: [FinishReason], expected: [FinishReason]) -> CheckResult {
        let bad = actual.enumerated().filter { !expected.contains($0.element) }
        let want = expected.map(\.rawValue).joined(separator: " or ")
        guard let first = bad.first else {
            return CheckResult("finish_reason", true, actual.map(\.rawValue).joined(separator: ", "))
        }
        let turn = actual.count > 1 ? " on turn \(first.offset + 1)" : ""
        return CheckResult("finish_reason", false, "finished \(first.element.rawValue)\(turn), expected \(want)")
    }

    /// `deterministic`: every run gave the same ids, turn by turn.
    public static func sameTokens(_ runs: [[[TokenID]]], label: String = "runs with the same seed") -> CheckResult {
        guard let first = runs.first else { return CheckResult("deterministic", false, "no runs") }
        for (i, r) in runs.enumerated().dropFirst() where r != first {
            let turn = (0..<min(first.count, r.count)).first { first[$0] != r[$0] } ?? min(first.count, r.count)
            let a = turn < first.count ? first[turn] : [], b = turn < r.count ? r[turn] : []
            let at = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
            return CheckResult("deterministic", false, "run \(i + 1) differs from run 1 at turn \(turn + 1), token \(at)")
        }
        return CheckResult("deterministic", true, "\(runs.count) \(label) gave the same tokens")
    }

    static func quote(_ s: String) -> String {
        let short = s.count > 60 ? String(s.prefix(57)) + "..." : s
        return "\"" + short.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : $0.escaped(asASCII: true) }.joined() + "\""
    }
}

extension Sequence where Element: Equatable {
    /// Whether `needle` occurs as a contiguous run.
    func contains<S: Collection>(subsequence needle: S) -> Bool where S.Element == Element {
        let hay = Array(self), n = Array(needle)
        guard !n.isEmpty else { return true }
        guard hay.count >= n.count else { return false }
        for i in 0...(hay.count - n.count) where hay[i] == n[0] && Array(hay[i..<(i + n.count)]) == n { return true }
        return false
    }
}
