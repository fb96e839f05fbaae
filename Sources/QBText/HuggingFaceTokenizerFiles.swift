import Foundation
import QBSupport

/// A byte-level BPE tokenizer (read from any file: a GGUF vocabulary, tokenizer.json,
/// tiktoken) written as the files a Hugging Face or MLX folder carries, so the folder
/// `quantize --quant mlx-*` writes opens in mlx-lm and transformers with nothing added:
/// tokenizer.json (BPE model, vocabulary, merges, the split as a `Split` regex with
/// `ByteLevel`, added tokens, BOS as a `TemplateProcessing` post-processor),
/// tokenizer_config.json (BOS/EOS text, the chat template) and generation_config.json
/// (BOS and every id that ends generation).
public enum HuggingFaceTokenizerFiles {
    /// File name to contents. `stopTokens` are the model's own end-of-generation ids.
    /// SentencePiece-style vocabularies are not written (`TokenizerError.unsupported`).
    public static func files(
        bpe t: BPETokenizer, stopTokens: Set<TokenID> = [], modelMaxLength: Int
    ) throws -> [(name: String, data: Data)] {
        guard t.kind == .byteLevel else {
            throw TokenizerError.unsupported(path: t.path, feature: "tokenizer.json for a SentencePiece-style vocabulary")
        }
        let q = { (s: String) in JSONWriter.quoted(s) }
        let preTokenizer: String
        let stages = t.preTokenizer.stages
        func byteLevel(_ prefix: Bool) -> String {
            "{\"type\": \"ByteLevel\", \"add_prefix_space\": \(prefix), \"trim_offsets\": true, \"use_regex\": true}"
        }
        if stages.count == 1, case .split(let pattern) = stages[0], pattern != .gpt2 {
            preTokenizer = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \(q(pattern.regexText))}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false, \"use_regex\": false}]}"
        } else if stages.count == 1, case .byteLevel(let prefix, true) = stages[0] {
            preTokenizer = byteLevel(prefix)
        } else if stages.count == 2, case .digits(let individual) = stages[0], case .byteLevel(let prefix, true) = stages[1] {
            preTokenizer = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", \"individual_digits\": \(individual)}, \(byteLevel(prefix))]}"
        } else {
            throw TokenizerError.unsupported(path: t.path, feature: "tokenizer.json for this tokenizer's split")
        }
        let added = t.addedTokens.tokens.sorted { $0.id < $1.id }
        let addedIDs = Set(added.map(\.id))

        var lines: [String] = ["{", "  \"version\": \"1.0\",", "  \"truncation\": null,", "  \"padding\": null,", "  \"added_tokens\": ["]
        for (i, a) in added.enumerated() {
            lines.append(
                "    {\"id\": \(a.id), \"content\": \(q(a.content)), \"single_word\": \(a.singleWord), \"lstrip\": \(a.lstrip), \"rstrip\": \(a.rstrip), \"normalized\": \(a.normalized), \"special\": \(a.special)}"
                    + (i + 1 < added.count ? "," : ""))
        }
        lines.append("  ],")
        lines.append("  \"normalizer\": null,")
        lines.append("  \"pre_tokenizer\": \(preTokenizer),")
        if t.addsBOS, let bos = t.bosTokenID, let text = t.token(for: bos) {
            let b = q(text)
            lines.append(
                "  \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \(b), \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"pair\": [{\"SpecialToken\": {\"id\": \(b), \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \(b), \"type_id\": 1}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}], \"special_tokens\": {\(b): {\"id\": \(b), \"ids\": [\(bos)], \"tokens\": [\(b)]}}},")
        } else {
            lines.append("  \"post_processor\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false, \"use_regex\": false},")
        }
        lines.append("  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},")
        lines.append("  \"model\": {")
        lines.append("    \"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": null, \"end_of_word_suffix\": null,")
        // Llama 3 style vocabularies take a whole word that is a token as it is, before merging.
        let ignoreMerges = t.preTokenizer.stages == [.split(.llama3)]
        lines.append("    \"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": \(ignoreMerges),")
        lines.append("    \"vocab\": {")
        var vocab: [String] = []
        for id in 0..<t.vocabularySize where !addedIDs.contains(TokenID(id)) {
            guard let text = t.token(for: TokenID(id)) else { continue }
            vocab.append("      \(q(text)): \(id)")
        }
        lines.append(vocab.joined(separator: ",\n"))
        lines.append("    },")
        lines.append("    \"merges\": [")
        lines.append(GGUFVocabulary.mergeList(t).map { merge -> String in
            let parts = merge.split(separator: " ", maxSplits: 1).map(String.init)
            return "      [\(q(parts.first ?? "")), \(q(parts.count > 1 ? parts[1] : ""))]"
        }.joined(separator: ",\n"))
        lines.append("    ]")
        lines.append("  }")
        lines.append("}")
        let tokenizerJSON = lines.joined(separator: "\n") + "\n"

        // The ids that end generation: the tokenizer's and the model's.
        let eos = t.eosTokenIDs.union(stopTokens).sorted()
        let eosText = eos.first.flatMap { t.token(for: $0) }
        var config: [String] = [
            "  \"add_bos_token\": \(t.addsBOS)", "  \"add_eos_token\": \(t.addsEOS)",
            "  \"clean_up_tokenization_spaces\": false", "  \"model_max_length\": \(modelMaxLength)",
            "  \"tokenizer_class\": \"PreTrainedTokenizerFast\"",
        ]
        if let bos = t.bosTokenID, let text = t.token(for: bos) { config.append("  \"bos_token\": \(q(text))") }
        if let eosText { config.append("  \"eos_token\": \(q(eosText))") }
        if let template = t.chatTemplate { config.append("  \"chat_template\": \(q(template))") }
        let tokenizerConfig = "{\n" + config.joined(separator: ",\n") + "\n}\n"

        var generation: [String] = []
        if let bos = t.bosTokenID { generation.append("  \"bos_token_id\": \(bos)") }
        if !eos.isEmpty { generation.append("  \"eos_token_id\": [\(eos.map(String.init).joined(separator: ", "))]") }
        let generationConfig = "{\n" + generation.joined(separator: ",\n") + "\n}\n"

        return [
            ("tokenizer.json", Data(tokenizerJSON.utf8)), ("tokenizer_config.json", Data(tokenizerConfig.utf8)),
            ("generation_config.json", Data(generationConfig.utf8)),
        ]
    }
}
