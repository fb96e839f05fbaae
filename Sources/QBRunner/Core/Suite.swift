import Foundation
import QBGeneration

/// A prompt suite: named cases that `bench` runs, read from a YAML file in `Prompts/`
/// (the schema is documented in Prompts/README.md and parsed by `SuiteLoader`).
public struct Suite: Sendable, Equatable {
    public var name: String
    public var description: String?
    /// The file it was read from (nil for suites built in code, such as `--pp/--tg` runs).
    public var path: String?
    /// XXH64 of the file's bytes, as 16 hex digits (of the canonical description for
    /// suites built in code), so results say exactly which suite produced them.
    public var hash: String
    public var cases: [SuiteCase]

    public init(name: String, description: String? = nil, path: String? = nil, hash: String, cases: [SuiteCase]) {
        self.name = name
        self.description = description
        self.path = path
        self.hash = hash
        self.cases = cases
    }
}

/// One case of a suite: a generation request (plain, chat, with stop strings), a
/// cancellation probe, or a llama-bench-style throughput test.
public struct SuiteCase: Sendable, Equatable {
    public var id: String
    /// The line of the suite file the case starts on (0 for cases built in code).
    public var line: Int
    public var prompt: PromptSpec
    /// Follow-up user messages of a chat case: the model's reply is appended to the
    /// conversation before each, and the session keeps its cache between turns.
    public var turns: [String]
    public var maxTokens: Int
    public var stop: [String]
    /// A stop string taken from the model's own output (see `StopProbe`).
    public var stopFromOutput: StopProbe?
    /// Bias every end-of-sequence id so that generation ends at its first step.
    public var forceEndOfSequence: Bool
    public var sampling: SamplingParameters
    /// KV cache positions (default: what the case needs, up to the model's context).
    public var context: Int?
    /// Most positions one forward chunk processes (the session's `maxBatch`).
    public var batch: Int?
    public var cancel: CancelPoint?
    public var throughput: ThroughputTest?
    public var expect: Expectations

    public init(
        id: String, line: Int = 0, prompt: PromptSpec = .text(""), turns: [String] = [], maxTokens: Int = 32,
        stop: [String] = [], stopFromOutput: StopProbe? = nil, forceEndOfSequence: Bool = false,
        sampling: SamplingParameters = .greedy, context: Int? = nil, batch: Int? = nil, cancel: CancelPoint? = nil,
        throughput: ThroughputTest? = nil, expect: Expectations = Expectations()
    ) {
        self.id = id
        self.line = line
        self.prompt = prompt
        self.turns = turns
        self.maxTokens = maxTokens
        self.stop = stop
        self.stopFromOutput = stopFromOutput
        self.forceEndOfSequence = forceEndOfSequence
        self.sampling = sampling
        self.context = context
        self.batch = batch
        self.cancel = cancel
        self.throughput = throughput
        self.expect = expect
    }

    /// What the runner does with the case.
    public var kind: Kind {
        if throughput != nil { return .throughput }
        if cancel != nil { return .cancel }
        if case .messages = prompt { return .chat }
        return .generate
    }

    public enum Kind: String, Sendable, Codable {
        case generate, chat, cancel, throughput
        /// One load level of `bench --endpoint` (a concurrency or a request rate); never in
        /// a suite file.
        case load
    }
}

/// Where a case's prompt comes from.
public enum PromptSpec: Sendable, Equatable {
    /// Raw text, tokenized with BOS as the tokenizer declares.
    case text(String)
    /// A conversation, rendered as the chat renders it (`ChatPromptRenderer`): the model's
    /// chat template, or plain continuation for a model without one.
    case messages(system: String?, [SuiteMessage])
    /// Exactly `count` prompt ids (BOS included when the tokenizer adds one): `filler`
    /// tokenized and repeated as often as needed, then cut. Model-independent lengths for
    /// the long-prompt suite.
    case tokens(count: Int, filler: String?)
}

/// One message of a conversation.
public struct SuiteMessage: Sendable, Equatable, Codable {
    /// The chat's roles, so a suite's messages render exactly as a chat's.
    public typealias Role = ChatRole
    public var role: Role
    public var content: String
    public init(role: Role, content: String) {
        self.role = role
        self.content = content
    }
}

/// A stop string cut from the model's own output, so a stop case works on any model: the
/// runner first generates without it (with the case's literal stops, if any), takes
/// `length` characters starting at character `start` of that text (moved earlier if the
/// text is shorter), then generates again with it added to the stop strings.
public struct StopProbe: Sendable, Equatable, Codable {
    public var start: Int
    public var length: Int
    public init(start: Int, length: Int) {
        self.start = start
        self.length = length
    }
}

/// Where a cancel case cancels. Counted in steps, never in wall-clock time.
public enum CancelPoint: Sendable, Equatable {
    /// Cancel as the `n`-th generated id is emitted (n ≥ 1): the request must end with
    /// exactly n ids and no further forward pass.
    case decode(afterTokens: Int)
    /// Cancel after `n` layer evaluations of the prefill (the forward pass checks for
    /// cancellation before every layer of every chunk): the request must end with no
    /// id generated and the cache holding exactly the chunks that completed.
    case prefill(afterLayers: Int)
}

/// A llama-bench-style test run on the model directly (`LanguageModel.forward`), not
/// through a session, so the figures are the engine's alone.
public struct ThroughputTest: Sendable, Equatable, Codable {
    public enum Test: String, Sendable, Codable {
        /// Prefill `tokens` random ids in one forward call (chunked internally).
        case prompt = "pp"
        /// `tokens` single-id forward calls, each fed the previous step's argmax.
        case generate = "tg"
    }
    public var test: Test
    public var tokens: Int
    /// Ids prefilled (untimed) before the test: decode or prefill "at depth".
    public var depth: Int

    public init(test: Test, tokens: Int, depth: Int = 0) {
        self.test = test
        self.tokens = tokens
        self.depth = depth
    }

    /// llama-bench's name for the test: `pp512`, `tg128`, `tg128 @ d4096`.
    public var name: String {
        "\(test.rawValue)\(tokens)" + (depth > 0 ? " @ d\(depth)" : "")
    }
}

/// What a case expects of its output, beyond the checks every case gets.
public struct Expectations: Sendable, Equatable, Codable {
    /// The finish reason must be one of these (nil: any).
    public var finishReasons: [FinishReason]?
    public var minTokens: Int?
    public var maxTokens: Int?
    /// Text that must (must not) appear in the output.
    public var contains: [String]
    public var notContains: [String]
    /// Every follow-up turn of a chat case reuses part of the cached conversation.
    public var reusesPrompt: Bool
    /// The prompt text survives encode then decode unchanged.
    public var promptRoundTrip: Bool
    /// The output holds no U+FFFD (no byte sequence the model produced was invalid).
    public var noReplacementCharacters: Bool

    public init(
        finishReasons: [FinishReason]? = nil, minTokens: Int? = nil, maxTokens: Int? = nil, contains: [String] = [],
        notContains: [String] = [], reusesPrompt: Bool = false, promptRoundTrip: Bool = false,
        noReplacementCharacters: Bool = false
    ) {
        self.finishReasons = finishReasons
        self.minTokens = minTokens
        self.maxTokens = maxTokens
        self.contains = contains
        self.notContains = notContains
        self.reusesPrompt = reusesPrompt
        self.promptRoundTrip = promptRoundTrip
        self.noReplacementCharacters = noReplacementCharacters
    }

    enum CodingKeys: String, CodingKey {
        case finishReasons = "finish_reason", minTokens = "min_tokens", maxTokens = "max_tokens", contains
        case notContains = "not_contains", reusesPrompt = "reuses_prompt", promptRoundTrip = "prompt_round_trip"
        case noReplacementCharacters = "no_replacement_characters"
    }
}
