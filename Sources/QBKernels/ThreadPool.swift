#if canImport(Glibc)
import Glibc
#endif
import CQBKernels

/// A persistent pool of worker threads (the caller is one of them).
///
/// Work is split by output item: every item is computed by the same code whichever thread
/// runs it, so results never depend on the thread count. Threads are created once, here;
/// a parallel section costs a store and a wake-up, not a thread creation.
public final class ThreadPool: @unchecked Sendable {
    // The C pool is internally synchronised; `run` must not be entered concurrently
    // from two threads, which the engine guarantees by giving each session its own pool
    // or calling it from one actor.
    private let pool: OpaquePointer?

    /// Number of threads that run a parallel section, the caller included.
    public let threadCount: Int

    /// Per-thread scratch, grown on demand; thread i only ever touches slot i.
    // A raw allocation, not a Swift array: concurrent writes to distinct slots of an array
    // property would trip the runtime's exclusivity check.
    private let scratchBuffers: UnsafeMutablePointer<FloatBuffer?>

    public init(threads: Int) {
        let n = max(1, threads)
        threadCount = n
        pool = qb_pool_create(Int32(n))
        scratchBuffers = .allocate(capacity: n)
        scratchBuffers.initialize(repeating: nil, count: n)
    }

    deinit {
        qb_pool_destroy(pool)
        scratchBuffers.deinitialize(count: threadCount)
        scratchBuffers.deallocate()
    }

    private var activationBuffer: FloatBuffer?

    /// Scratch for the calling thread outside parallel sections (quantized activations).
    public func activationScratch(bytes: Int) -> UnsafeMutableRawPointer {
        let floats = (bytes + 3) / 4
        if let b = activationBuffer, b.count >= floats { return UnsafeMutableRawPointer(b.pointer) }
        let b = FloatBuffer(count: floats, zeroed: false)
        activationBuffer = b
        return UnsafeMutableRawPointer(b.pointer)
    }

    /// Scratch space of at least `floats` floats private to worker `thread` for the
    /// duration of a parallel section.
    public func scratch(thread: Int, floats: Int) -> UnsafeMutablePointer<Float> {
        if let b = scratchBuffers[thread], b.count >= floats { return b.pointer }
        let b = FloatBuffer(count: floats, zeroed: false)
        scratchBuffers[thread] = b
        return b.pointer
    }

    /// The number of threads to use when the user does not say: every core, as
    /// llama.cpp and MLX do on CPU.
    public static var defaultThreadCount: Int { max(1, System.activeProcessorCount) }

    /// Calls `body(range, thread)` on disjoint chunks of `0..<count`, `grain` items each,
    /// and returns when all are done.
    public func parallelFor(_ count: Int, grain: Int = 1, _ body: (Range<Int>, Int) -> Void) {
        guard count > 0 else { return }
        let g = max(1, grain)
        if threadCount == 1 || count <= g {
            var b = 0
            while b < count { body(b..<min(b + g, count), 0); b += g }
            return
        }
        withoutActuallyEscaping(body) { escaping in
            var closure = escaping
            withUnsafeMutablePointer(to: &closure) { ctx in
                qb_pool_run(pool, { raw, begin, end, thread in
                    let f = raw!.assumingMemoryBound(to: ((Range<Int>, Int) -> Void).self).pointee
                    f(Int(begin)..<Int(end), Int(thread))
                }, ctx, Int64(count), Int64(g))
            }
        }
    }

    /// Calls `task(context, begin, end, thread)` on disjoint chunks of `0..<count`, `grain`
    /// items each, and returns when all are done: `parallelFor` with no Swift closure between
    /// the pool and the work. Each call of a closure the pool holds retains and releases its
    /// context, on every thread, atomics on one shared cache line, and so do the arrays and
    /// objects the closure reaches. In Gemma 3 270M's 640 x 1024 output product (two
    /// threads, ~11 µs of work each) the threads began their first chunk 1.0-1.4 µs into the
    /// section and the caller returned ~1.5 µs after the last chunk ended; through `run`,
    /// 0.3-0.5 µs and 0.6-1.3 µs (Intel Xeon). `context` must hold only pointers and plain
    /// values, valid until the call returns.
    public func run(_ count: Int, grain: Int = 1, context: UnsafeMutableRawPointer, _ task: qb_task_fn) {
        guard count > 0 else { return }
        qb_pool_run(pool, task, context, Int64(count), Int64(max(1, grain)))
    }

    /// `body` with the bounds of tapered chunks covering `0..<count` (chunk c is bounds[c]
    /// ..< bounds[c + 1]), in a temporary allocation rather than an array: decode cuts every
    /// product it runs. With several threads, `grain` items a chunk while much work remains,
    /// then smaller ones (half of what is left, shared over the threads; at least
    /// `minimum`), all but the last a multiple of `align`; on one thread `grain` items each.
    /// A section ends when its last chunk does: uniform chunks leave the other threads idle
    /// for up to a whole chunk then (more when a thread is descheduled on a busy machine),
    /// tapered ones for at most a small one.
    func taperedBounds<R>(
        _ count: Int, grain: Int, minimum: Int, align: Int = 1, _ body: (UnsafeBufferPointer<Int>) -> R
    ) -> R {
        let a = max(1, align), floor = max(a, (minimum + a - 1) / a * a), g = max(floor, grain)
        // One thread takes `grain` items a chunk (`parallelFor`'s cut); more share tapered ones.
        func next(_ at: Int) -> Int {
            if threadCount == 1 { return min(count, at + max(1, grain)) }
            let share = (count - at) / (2 * threadCount) / a * a
            return min(count, at + min(g, max(floor, share)))
        }
        var chunks = 0, at = 0
        while at < count { at = next(at); chunks += 1 }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: chunks + 1) { buffer in
            var at = 0, c = 0
            buffer.initializeElement(at: 0, to: 0)
            while c < chunks {
                at = next(at)
                c += 1
                buffer.initializeElement(at: c, to: at)
            }
            return body(UnsafeBufferPointer(start: buffer.baseAddress, count: chunks + 1))
        }
    }

    /// A grain that gives each thread several chunks (for balance) of at least `minimum`.
    public func grain(for count: Int, minimum: Int = 1) -> Int {
        max(minimum, count / (threadCount * 8))
    }
}

/// Facts about the machine that kernels and reports need.
public enum System {
    /// Processors this process may run on.
    public static var activeProcessorCount: Int {
        Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
