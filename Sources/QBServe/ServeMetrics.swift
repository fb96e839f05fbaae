import QBRunner
import Synchronization

/// The server's counters, gauges and histograms, readable at any time without waiting
/// for the scheduler's step, and written out in Prometheus' text format (version 0.0.4).
public final class ServeMetrics: Sendable {
    /// Upper bounds (seconds) of the latency histograms' buckets.
    public static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    struct Histogram {
        var counts = [Int](repeating: 0, count: ServeMetrics.latencyBuckets.count)
        var sum = 0.0
        var count = 0

        mutating func observe(_ v: Double) {
            if let i = ServeMetrics.latencyBuckets.firstIndex(where: { v <= $0 }) { counts[i] += 1 }
            sum += v
            count += 1
        }
    }

    struct Values {
        var requests: [String: Int] = [:]
        var finished: [String: Int] = [:]
        var promptTokens = 0
        var generatedTokens = 0
        var active = 0
        var queued = 0
        var kvBytes = 0
        var kvReserved = 0
        var ttft = Histogram()
        var itl = Histogram()
        var queueWait = Histogram()
    }

    private let values = Mutex(Values())
    public let slots: Int
    public let kvBudget: Int

    init(slots: Int, kvBudget: Int) {
        self.slots = slots
        self.kvBudget = kvBudget
    }

    /// A request answered, by endpoint and status code.
    public func request(endpoint: String, status: Int) {
        values.withLock { $0.requests["\(endpoint)|\(status)", default: 0] += 1 }
    }

    func requestQueued() {}
    func admitted(waited: Double) { values.withLock { $0.queueWait.observe(waited) } }
    func prefilled(tokens: Int) { values.withLock { $0.promptTokens += tokens } }
    func generated() { values.withLock { $0.generatedTokens += 1 } }
    func firstToken(seconds: Double) { values.withLock { $0.ttft.observe(seconds) } }
    func interToken(seconds: Double) { values.withLock { $0.itl.observe(seconds) } }
    func finished(_ f: JobFinish) { values.withLock { $0.finished[f.rawValue, default: 0] += 1 } }
    func gauges(active: Int, queued: Int, kvBytes: Int, kvReserved: Int) {
        values.withLock {
            $0.active = active
            $0.queued = queued
            $0.kvBytes = kvBytes
            $0.kvReserved = kvReserved
        }
    }

    /// Sequences holding a slot, jobs waiting, KV bytes in use.
    public var load: (active: Int, queued: Int, kvBytes: Int) {
        values.withLock { ($0.active, $0.queued, $0.kvBytes) }
    }

    /// Everything, in Prometheus' text exposition format.
    public func prometheusText() -> String {
        let v = values.withLock { $0 }
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples { out += "\(name)\(labels) \(value)\n" }
        }
        func histogram(_ name: String, _ help: String, _ h: Histogram) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
            var cumulative = 0
            for (bound, c) in zip(Self.latencyBuckets, h.counts) {
                cumulative += c
                out += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "\(name)_bucket{le=\"+Inf\"} \(h.count)\n\(name)_sum \(h.sum)\n\(name)_count \(h.count)\n"
        }
        metric(
            "quantbench_http_requests_total", "counter", "HTTP requests answered, by endpoint and status.",
            v.requests.sorted { $0.key < $1.key }.map { key, n in
                let parts = key.split(separator: "|", maxSplits: 1).map(String.init)
                return ("{endpoint=\"\(parts[0])\",status=\"\(parts.count > 1 ? parts[1] : "")\"}", "\(n)")
            })
        metric(
            "quantbench_jobs_finished_total", "counter", "Completions ended, by finish reason.",
            v.finished.sorted { $0.key < $1.key }.map { ("{reason=\"\($0.key)\"}", "\($0.value)") })
        metric("quantbench_prompt_tokens_total", "counter", "Prompt tokens prefilled.", [("", "\(v.promptTokens)")])
        metric("quantbench_generation_tokens_total", "counter", "Tokens generated.", [("", "\(v.generatedTokens)")])
        metric("quantbench_slots_active", "gauge", "Sequences holding a KV cache slot.", [("", "\(v.active)")])
        metric("quantbench_slots_total", "gauge", "KV cache slots (--parallel).", [("", "\(slots)")])
        metric("quantbench_queue_depth", "gauge", "Requests waiting for a slot or KV budget.", [("", "\(v.queued)")])
        metric("quantbench_kv_cache_used_bytes", "gauge", "KV cache bytes holding positions of running sequences.", [("", "\(v.kvBytes)")])
        metric("quantbench_kv_cache_reserved_bytes", "gauge", "KV cache bytes reserved by admitted requests.", [("", "\(v.kvReserved)")])
        metric("quantbench_kv_cache_budget_bytes", "gauge", "KV cache budget (--kv-budget).", [("", "\(kvBudget)")])
        // The process's memory, read now: a server that leaks per request shows it here first.
        let memory = MemoryStats.current()
        if let rss = memory.residentBytes {
            metric("process_resident_memory_bytes", "gauge", "Resident memory of the server process (VmRSS).", [("", "\(rss)")])
        }
        if let allocated = memory.allocatedBytes {
            metric("quantbench_tcmalloc_allocated_bytes", "gauge", "Bytes the program holds from tcmalloc.", [("", "\(allocated)")])
        }
        if let heap = memory.heapBytes {
            metric("quantbench_tcmalloc_heap_bytes", "gauge", "Bytes tcmalloc has taken from the system.", [("", "\(heap)")])
        }
        histogram("quantbench_time_to_first_token_seconds", "From admission to the first generated token.", v.ttft)
        histogram("quantbench_inter_token_latency_seconds", "Between consecutive tokens of one sequence.", v.itl)
        histogram("quantbench_queue_wait_seconds", "From arrival to admission.", v.queueWait)
        return out
    }
}
