import Foundation
import QBSupport

/// The tokenizer of the project's synthetic models: a byte-level BPE learned from
/// `SyntheticCorpus`, written as a Hugging Face tokenizer.json shaped like Llama 3's (Split
/// with the Llama 3 pattern + ByteLevel, ByteLevel decoder, a TemplateProcessing
/// post-processor adding `<|begin_of_text|>`) plus a tokenizer_config.json with a
/// Llama-3-style chat template.
///
/// Id layout for a vocabulary of size V:
/// - 0…255: the 256 bytes (id = byte value);
/// - then the learned tokens, in merge order (as many merges as the text yields, up to the
///   requested count, and never more than fit);
/// - then `<|pad_N|>` filler entries up to V − 256: ordinary vocabulary entries that no
///   merge produces and no pre-token can equal, so they are never emitted;
/// - the last 256 ids: Llama 3's special tokens in Llama 3's order (`<|begin_of_text|>` at
///   V − 256, `<|end_of_text|>` V − 255, … `<|eot_id|>` V − 247, then reserved tokens), so
///   for V = 128256 the special ids are exactly Llama 3's.
/// The same arguments always give byte-identical files.
public enum SyntheticTokenizer {
    /// The ids a model config needs (`bos_token_id`, `eos_token_id`) and the chat markers.
    public struct SpecialTokenIDs: Sendable, Equatable {
        public let bos: TokenID
        /// Every id that ends a generation: `<|end_of_text|>`, `<|eom_id|>`, `<|eot_id|>`
        /// (ascending, as Llama 3.1's generation_config lists them).
        public let eos: [TokenID]
        public let endOfText: TokenID
        public let endOfTurn: TokenID
        public let endOfMessage: TokenID
        public let startHeader: TokenID
        public let endHeader: TokenID
        public let finetunePad: TokenID
        public let pythonTag: TokenID
    }

    /// 256 byte tokens + 256 special tokens.
    public static let minimumVocabularySize = 512
    public static let maximumVocabularySize = 1 << 22
    public static let defaultMerges = 1000
    public static let specialTokenCount = 256

    /// The 256 special tokens, in id order.
    public static let specialTokens: [String] = {
        var names = [
            "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
            "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
            "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
        ]
        var n = 3
        while names.count < specialTokenCount {
            names.append("<|reserved_special_token_\(n)|>")
            n += 1
        }
        return names
    }()

    /// `<|begin_of_text|>`, then per message
    /// `<|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>`, then with
    /// `add_generation_prompt` the assistant header. (Unlike Llama 3's own template the
    /// content is not trimmed.)
    public static let chatTemplate =
        #"{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] + '<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}"#

    /// Merges learned once from the built-in text, until no pair repeats; any requested
    /// count uses a prefix (greedy training makes a shorter run a prefix of a longer one).
    public static let training: BPETrainer.Result = BPETrainer.train(text: SyntheticCorpus.text, maxMerges: .max)

    /// The special-token ids for a vocabulary of `vocabularySize`.
    public static func specialTokenIDs(vocabularySize: Int) -> SpecialTokenIDs {
        let base = vocabularySize - specialTokenCount
        func id(_ name: String) -> TokenID { TokenID(base + (specialTokens.firstIndex(of: name) ?? 0)) }
        return SpecialTokenIDs(
            bos: id("<|begin_of_text|>"),
            eos: [id("<|end_of_text|>"), id("<|eom_id|>"), id("<|eot_id|>")],
            endOfText: id("<|end_of_text|>"), endOfTurn: id("<|eot_id|>"), endOfMessage: id("<|eom_id|>"),
            startHeader: id("<|start_header_id|>"), endHeader: id("<|end_header_id|>"),
            finetunePad: id("<|finetune_right_pad_id|>"), pythonTag: id("<|python_tag|>"))
    }

    /// How many merges a tokenizer of this size gets when `requested` are asked for.
    public static func mergeCount(vocabularySize: Int, requested: Int) -> Int {
        let room = vocabularySize - minimumVocabularySize
        var count = min(max(0, requested), training.merges.count)
        while count > 0 && training.tokenCount(afterMerges: count) - 256 > room { count -= 1 }
        return count
    }

    /// Writes tokenizer.json and tokenizer_config.json into `directory` (which must exist)
    /// and returns the special-token ids. Throws `TokenizerError.malformed` for a vocabulary
    /// size outside 512…2²², and the file system's error if a file cannot be written.
    @discardableResult
    public static func write(to directory: URL, vocabularySize: Int, merges: Int = defaultMerges) throws -> SpecialTokenIDs {
        let tokenizerURL = directory.appendingPathComponent("tokenizer.json")
        let json = try tokenizerJSON(vocabularySize: vocabularySize, merges: merges, path: tokenizerURL.path)
        try Data(json.utf8).write(to: tokenizerURL, options: .atomic)
        try Data(tokenizerConfigJSON().utf8).write(to: directory.appendingPathComponent("tokenizer_config.json"), options: .atomic)
        return specialTokenIDs(vocabularySize: vocabularySize)
    }

    /// The tokenizer.json text. `path` names the file in errors.
    public static func tokenizerJSON(vocabularySize: Int, merges requested: Int = defaultMerges, path: String = "tokenizer.json") throws -> String {
        guard vocabularySize >= minimumVocabularySize, vocabularySize <= maximumVocabularySize else {
            throw TokenizerError.malformed(
                path: path, field: "vocabularySize",
                reason: "\(vocabularySize) is outside \(minimumVocabularySize)...\(maximumVocabularySize): the synthetic tokenizer needs 256 byte tokens and 256 special tokens")
        }
        guard requested >= 0 else {
            throw TokenizerError.malformed(path: path, field: "merges", reason: "\(requested) is negative")
        }
        let mergeCount = mergeCount(vocabularySize: vocabularySize, requested: requested)
        let merges = training.merges.prefix(mergeCount)
        let learned = training.tokenCount(afterMerges: mergeCount)
        let specialBase = vocabularySize - specialTokenCount

        var vocab: [String] = []
        vocab.reserveCapacity(specialBase)
        for id in 0..<learned { vocab.append(ByteLevel.encode(training.tokens[id])) }
        for n in 0..<(specialBase - learned) { vocab.append("<|pad_\(n)|>") }

        let q = { (s: String) in JSONWriter.quoted(s) }
        var lines: [String] = []
        lines.reserveCapacity(vocabularySize + mergeCount + 64)
        lines.append("{")
        lines.append("  \"version\": \"1.0\",")
        lines.append("  \"truncation\": null,")
        lines.append("  \"padding\": null,")
        lines.append("  \"added_tokens\": [")
        for (i, name) in specialTokens.enumerated() {
            let comma = i + 1 < specialTokens.count ? "," : ""
            lines.append("    {\"id\": \(specialBase + i), \"content\": \(q(name)), \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true}\(comma)")
        }
        lines.append("  ],")
        lines.append("  \"normalizer\": null,")
        lines.append("  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \(q(PreTokenizer.SplitPattern.llama3Text))}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]},")
        let bos = q(specialTokens[0])
        lines.append("  \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \(bos), \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"pair\": [{\"SpecialToken\": {\"id\": \(bos), \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \(bos), \"type_id\": 1}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}], \"special_tokens\": {\(bos): {\"id\": \(bos), \"ids\": [\(specialBase)], \"tokens\": [\(bos)]}}},")
        lines.append("  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},")
        lines.append("  \"model\": {")
        lines.append("    \"type\": \"BPE\",")
        lines.append("    \"dropout\": null,")
        lines.append("    \"unk_token\": null,")
        lines.append("    \"continuing_subword_prefix\": null,")
        lines.append("    \"end_of_word_suffix\": null,")
        lines.append("    \"fuse_unk\": false,")
        lines.append("    \"byte_fallback\": false,")
        lines.append("    \"ignore_merges\": true,")
        lines.append("    \"vocab\": {")
        for (id, token) in vocab.enumerated() {
            lines.append("      \(q(token)): \(id)\(id + 1 < vocab.count ? "," : "")")
        }
        lines.append("    },")
        lines.append("    \"merges\": [")
        for (i, merge) in merges.enumerated() {
            let left = ByteLevel.encode(training.tokens[merge.left])
            let right = ByteLevel.encode(training.tokens[merge.right])
            lines.append("      [\(q(left)), \(q(right))]\(i + 1 < merges.count ? "," : "")")
        }
        lines.append("    ]")
        lines.append("  }")
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The tokenizer_config.json text.
    public static func tokenizerConfigJSON() -> String {
        let q = { (s: String) in JSONWriter.quoted(s) }
        return """
            {
              "add_bos_token": true,
              "add_eos_token": false,
              "bos_token": \(q("<|begin_of_text|>")),
              "chat_template": \(q(chatTemplate)),
              "clean_up_tokenization_spaces": false,
              "eos_token": \(q("<|eot_id|>")),
              "model_input_names": ["input_ids", "attention_mask"],
              "model_max_length": 131072,
              "tokenizer_class": "PreTrainedTokenizerFast"
            }

            """
    }
}
