/// llama.cpp's names of GGUF `general.file_type` values (LLAMA_FTYPE_*), as
/// `llama_ftype_name` (src/llama-model-loader.cpp) prints them and llama-bench shows them
/// in its model column, e.g. 15 → "Q4_K - Medium".
public enum GGUFFileType {
    static let names: [Int: String] = [
        0: "all F32", 1: "F16", 32: "BF16", 40: "Q1_0", 41: "Q2_0", 2: "Q4_0", 3: "Q4_1", 8: "Q5_0", 9: "Q5_1", 7: "Q8_0",
        38: "MXFP4 MoE", 39: "NVFP4", 10: "Q2_K - Medium", 21: "Q2_K - Small", 11: "Q3_K - Small", 12: "Q3_K - Medium",
        13: "Q3_K - Large", 14: "Q4_K - Small", 15: "Q4_K - Medium", 16: "Q5_K - Small", 17: "Q5_K - Medium", 18: "Q6_K",
        36: "TQ1_0 - 1.69 bpw ternary", 37: "TQ2_0 - 2.06 bpw ternary", 19: "IQ2_XXS - 2.0625 bpw", 20: "IQ2_XS - 2.3125 bpw",
        28: "IQ2_S - 2.5 bpw", 29: "IQ2_M - 2.7 bpw", 22: "IQ3_XS - 3.3 bpw", 23: "IQ3_XXS - 3.0625 bpw",
        24: "IQ1_S - 1.5625 bpw", 31: "IQ1_M - 1.75 bpw", 25: "IQ4_NL - 4.5 bpw", 30: "IQ4_XS - 4.25 bpw",
        26: "IQ3_S - 3.4375 bpw", 27: "IQ3_S mix - 3.66 bpw",
    ]

    /// The name llama.cpp prints for `fileType` ("(guessed) " first when bit 1024 is set,
    /// "unknown, may not work" for a value it does not know).
    public static func name(_ fileType: Int) -> String {
        guard fileType >= 0 else { return "unknown, may not work" }
        let name = names[fileType & ~1024] ?? "unknown, may not work"
        return fileType & 1024 != 0 ? "(guessed) " + name : name
    }
}
