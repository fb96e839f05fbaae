import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBText

/// One completion request as the scheduler takes it: ids already rendered and checked.
public struct CompletionJob: Sendable {
    public let prompt: [TokenID]
    public let maxTokens: Int
    public let sampling: SamplingParameters
    public let stop: [String]

    public init(prompt: [TokenID], maxTokens: Int, sampling: SamplingParameters, stop: [String]) {
        self.prompt = prompt
        self.maxTokens = maxTokens
        self.sampling = sampling
        self.stop = stop
    }
}

/// A job taken: its id (for `cancel`) and its events.
public struct JobTicket: Sendable {
    public let id: UInt64
    public let events: AsyncStream<JobEvent>
}

/// Why a job ended, in the API's words (`finish_reason`).
public enum JobFinish: String, Sendable {
    /// An end-of-sequence id or a stop string.
    case stop
    /// `max_tokens` reached or the context full.
    case length
    /// The server shut down before the job finished.
    case abort
    /// The client went away.
    case cancelled
}

/// What a job's stream carries: text as it becomes safe to show (stop strings held
/// back), then exactly one `finished`.
public enum JobEvent: Sendable {
    case text(String, tokens: [TokenID])
    case finished(JobSummary)
}

public struct JobSummary: Sendable {
    public let finish: JobFinish
    public let promptTokens: Int
    public let completionTokens: Int
    public let timeToFirstToken: Double?
}

/// Why a job was not taken.
public enum AdmissionError: Error, Sendable, Equatable {
    /// The wait queue is full: try again later.
    case queueFull(limit: Int)
    /// The job's KV reservation alone exceeds the budget.
    case exceedsBudget(needed: Int, budget: Int)
    /// More positions than one slot's context.
    case exceedsContext(needed: Int, context: Int)
    case shuttingDown
}

/// Limits of a scheduler.
public struct SchedulerLimits: Sendable {
    /// Sequences decoded together at most (KV cache slots).
    public var parallel: Int
    /// Positions per slot.
    public var contextLength: Int
    /// Bytes of KV cache that admitted jobs may reserve together (prompt + max_tokens
    /// positions each); nil: every slot's full context.
    public var kvBudget: Int?
    /// Jobs waiting for a slot or budget at most; beyond that, `queueFull`.
    public var queueLimit: Int
    /// Prompt positions one step prefills for one sequence, so a long prompt shares the
    /// steps with decoding sequences instead of stalling them.
    public var prefillChunk: Int

    public init(parallel: Int, contextLength: Int, kvBudget: Int? = nil, queueLimit: Int = 64, prefillChunk: Int = 64) {
        self.parallel = max(1, parallel)
        self.contextLength = max(2, contextLength)
        self.kvBudget = kvBudget
        self.queueLimit = max(0, queueLimit)
        self.prefillChunk = max(1, prefillChunk)
    }
}

/// Continuous batching: owns the model's states and runs every admitted job a step at a
/// time. A step prefills one chunk of one waiting prompt, then decodes one token for every
/// sequence past its prompt in a single batched forward pass (`forwardBatch`), each with
/// its own KV cache slot, sampler and RNG. Jobs join and leave between steps; a cancelled
/// job's slot is free at the next step.
///
/// The actor runs on its own thread (`EngineThread`): its forward passes block for
/// milliseconds and must not hold a thread of the cooperative pool.
public actor BatchScheduler {
    private let executor: EngineThread
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public nonisolated let limits: SchedulerLimits
    public nonisolated let metrics: ServeMetrics
    /// Bytes of KV cache one position of one sequence takes.
    public nonisolated let bytesPerPosition: Int
    public nonisolated let budget: Int
    private let model: any LanguageModel
    private let tokenizer: any Tokenizer
    private let stopIDs: Set<TokenID>
    private let scratch: InferenceState
    private var slots: [Slot]
    private var free: [Int]
    private var queue: [Pending] = []
    private var reserved = 0
    private var nextID: UInt64 = 0
    private var idle: CheckedContinuation<Void, Never>?
    private var draining = false
    private var running = false

    private struct Pending {
        let id: UInt64
        let job: CompletionJob
        let reservation: Int
        let continuation: AsyncStream<JobEvent>.Continuation
        let enqueued: ContinuousClock.Instant
    }

    private struct Slot {
        let state: InferenceState
        var active: Active?
    }

    private struct Active {
        let id: UInt64
        let job: CompletionJob
        let reservation: Int
        let continuation: AsyncStream<JobEvent>.Continuation
        var prefilled = 0
        var sampler: any TokenSampler
        var text: StreamingDetokenizer
        var stops: StopStringFilter
        var sequence: [TokenID]
        var generated = 0
        var pending: TokenID?
        var cancelled = false
        let started: ContinuousClock.Instant
        var lastToken: ContinuousClock.Instant?
        var firstToken: Double?
    }

    public init(model: any LanguageModel, tokenizer: any Tokenizer, pool: ThreadPool, kvType: KVCacheType, limits: SchedulerLimits) {
        executor = EngineThread(name: "quantbench-engine")
        self.limits = limits
        self.model = model
        self.tokenizer = tokenizer
        stopIDs = Set(model.stopTokens).union(tokenizer.eosTokenIDs)
        let states = (0..<limits.parallel).map { _ in
            model.makeState(contextLength: limits.contextLength, pool: pool, maxBatch: limits.prefillChunk, kvType: kvType)
        }
        slots = states.map { Slot(state: $0, active: nil) }
        free = Array((0..<limits.parallel).reversed())
        scratch = model.makeState(contextLength: limits.parallel, pool: pool, maxBatch: limits.parallel, kvType: kvType)
        let c = states[0].cache
        bytesPerPosition = c.layers * 2 * c.kvHeads * c.rowBytes
        budget = limits.kvBudget ?? limits.parallel * limits.contextLength * bytesPerPosition
        metrics = ServeMetrics(slots: limits.parallel, kvBudget: budget)
    }

    /// Takes a job: its events arrive on the returned stream. Ending the stream (the
    /// consumer's task cancelled, the stream dropped) cancels the job.
    public func submit(_ job: CompletionJob) throws(AdmissionError) -> JobTicket {
        if draining { throw .shuttingDown }
        let positions = job.prompt.count + job.maxTokens
        guard positions <= limits.contextLength else {
            throw .exceedsContext(needed: positions, context: limits.contextLength)
        }
        let reservation = positions * bytesPerPosition
        guard reservation <= budget else { throw .exceedsBudget(needed: reservation, budget: budget) }
        guard queue.count < limits.queueLimit || canAdmit(reservation) && queue.isEmpty else {
            throw .queueFull(limit: limits.queueLimit)
        }
        nextID += 1
        let id = nextID
        let (stream, continuation) = AsyncStream<JobEvent>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] reason in
            guard case .cancelled = reason, let self else { return }
            Task { await self.cancel(id) }
        }
        queue.append(Pending(id: id, job: job, reservation: reservation, continuation: continuation, enqueued: .now))
        metrics.requestQueued()
        wakeUp()
        return JobTicket(id: id, events: stream)
    }

    /// Cancels job `id` wherever it is: a queued job leaves the queue now, a running one
    /// frees its slot at the next step.
    public func cancel(_ id: UInt64) {
        if let i = queue.firstIndex(where: { $0.id == id }) {
            let p = queue.remove(at: i)
            p.continuation.yield(.finished(JobSummary(finish: .cancelled, promptTokens: p.job.prompt.count, completionTokens: 0, timeToFirstToken: nil)))
            p.continuation.finish()
            metrics.finished(.cancelled)
            publish()
            return
        }
        for s in slots.indices where slots[s].active?.id == id { slots[s].active?.cancelled = true }
        wakeUp()
    }

    /// Stops taking jobs, aborts the queued ones, lets running ones go on for `grace`
    /// seconds and then aborts them; returns when no job is left.
    public func drain(grace: Double) async {
        draining = true
        for p in queue {
            p.continuation.yield(.finished(JobSummary(finish: .abort, promptTokens: p.job.prompt.count, completionTokens: 0, timeToFirstToken: nil)))
            p.continuation.finish()
            metrics.finished(.abort)
        }
        queue.removeAll()
        publish()
        let deadline = ContinuousClock.now + .milliseconds(Int(max(0, grace) * 1000))
        while slots.contains(where: { $0.active != nil }) {
            if ContinuousClock.now >= deadline {
                for s in slots.indices where slots[s].active != nil { release(s, .abort) }
                break
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The loop: runs steps while there is work, sleeps while there is none. Call once.
    public func run() async {
        guard !running else { return }
        running = true
        while true {
            admit()
            if !slots.contains(where: { $0.active != nil }) {
                await withCheckedContinuation { idle = $0 }
                continue
            }
            step()
            publish()
            // Lets submissions and cancellations that arrived during the step run.
            await Task.yield()
        }
    }

    // MARK: - Steps

    private func wakeUp() {
        if let c = idle {
            idle = nil
            c.resume()
        }
    }

    private func canAdmit(_ reservation: Int) -> Bool { !free.isEmpty && reserved + reservation <= budget }

    private func admit() {
        while let first = queue.first, canAdmit(first.reservation) {
            queue.removeFirst()
            let s = free.removeLast()
            reserved += first.reservation
            slots[s].state.cache.truncate(to: 0)
            slots[s].active = Active(
                id: first.id, job: first.job, reservation: first.reservation, continuation: first.continuation,
                sampler: first.job.sampling.makeSampler(vocabularySize: model.config.vocabSize),
                text: StreamingDetokenizer(tokenizer: tokenizer, context: first.job.prompt),
                stops: StopStringFilter(first.job.stop), sequence: first.job.prompt, started: .now)
            metrics.admitted(waited: (ContinuousClock.now - first.enqueued).seconds)
        }
    }

    private func step() {
        // Cancelled jobs leave first: their slots are free for the next admission.
        for s in slots.indices where slots[s].active?.cancelled == true { release(s, .cancelled) }

        // One prefill chunk, for the job that has waited longest.
        if let s = slots.indices.filter({ slots[$0].active.map { $0.pending == nil && $0.generated == 0 } ?? false })
            .min(by: { slots[$0].active!.id < slots[$1].active!.id })
        {
            prefill(s)
        }

        // One decode step for every sequence with a token to feed.
        let batch = slots.indices.filter { slots[$0].active?.pending != nil }
        guard !batch.isEmpty else { return }
        let tokens = batch.map { slots[$0].active!.pending! }
        do {
            let logits = try model.forwardBatch(tokens, states: batch.map { slots[$0].state }, scratch: scratch)
            for (s, l) in zip(batch, logits) {
                slots[s].active?.pending = nil
                var l = l
                sample(s, &l)
            }
        } catch {
            for s in batch { release(s, .abort) }
        }
    }

    private func prefill(_ s: Int) {
        guard let a = slots[s].active else { return }
        let state = slots[s].state
        let end = min(a.job.prompt.count, a.prefilled + limits.prefillChunk)
        let chunk = Array(a.job.prompt[a.prefilled..<end])
        let isLast = end == a.job.prompt.count
        do {
            var logits = try model.forward(chunk, state: state, logits: isLast ? .last : .none)
            slots[s].active?.prefilled = end
            metrics.prefilled(tokens: chunk.count)
            if isLast { sample(s, &logits) }
        } catch {
            release(s, .abort)
        }
    }

    /// Picks slot `s`'s next token from `logits`, sends its text, and either queues the
    /// token for the next decode step or ends the job.
    private func sample(_ s: Int, _ logits: inout [Float]) {
        guard var a = slots[s].active else { return }
        if a.cancelled { return release(s, .cancelled) }
        if a.job.maxTokens == 0 { return release(s, .length) }
        let next = a.sampler.sample(&logits, history: a.sequence[...])
        if stopIDs.contains(next) {
            slots[s].active = a
            return release(s, .stop)
        }
        let now = ContinuousClock.now
        if a.firstToken == nil {
            a.firstToken = (now - a.started).seconds
            metrics.firstToken(seconds: a.firstToken!)
        } else if let last = a.lastToken {
            metrics.interToken(seconds: (now - last).seconds)
        }
        a.lastToken = now
        a.generated += 1
        a.sequence.append(next)
        metrics.generated()
        let shown = a.stops.push(a.text.push(next))
        a.continuation.yield(.text(shown, tokens: [next]))
        slots[s].active = a
        if a.stops.matched != nil { return release(s, .stop, flush: false) }
        if a.generated >= a.job.maxTokens || slots[s].state.cache.length >= slots[s].state.cache.capacity {
            return release(s, .length)
        }
        slots[s].active?.pending = next
    }

    /// Ends slot `s`'s job with `finish` and frees the slot and its reservation.
    private func release(_ s: Int, _ finish: JobFinish, flush: Bool = true) {
        guard var a = slots[s].active else { return }
        if flush && finish != .cancelled {
            let rest = a.stops.push(a.text.finish()) + a.stops.flush()
            if !rest.isEmpty { a.continuation.yield(.text(rest, tokens: [])) }
        }
        a.continuation.yield(.finished(JobSummary(
            finish: finish, promptTokens: a.job.prompt.count, completionTokens: a.generated, timeToFirstToken: a.firstToken)))
        a.continuation.finish()
        slots[s].active = nil
        slots[s].state.cache.truncate(to: 0)
        reserved -= a.reservation
        free.append(s)
        metrics.finished(finish)
    }

    private func publish() {
        let active = slots.filter { $0.active != nil }.count
        let kv = slots.reduce(0) { $0 + ($1.active == nil ? 0 : $1.state.cache.length) } * bytesPerPosition
        metrics.gauges(active: active, queued: queue.count, kvBytes: kv, kvReserved: reserved)
    }
}
