import Foundation

/// XXH64 (Yann Collet's xxHash, 64-bit, seed 0): a fast non-cryptographic hash, enough to
/// tell which model or suite file a result came from (not to defend against tampering).
/// Results record it as 16 lowercase hex digits; `xxhsum -H1 FILE` prints the same value.
public struct XXH64: Sendable {
    static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var v1, v2, v3, v4: UInt64
    private let seed: UInt64
    private var total: UInt64 = 0
    /// Bytes of an unfinished 32-byte stripe.
    private var buffer: [UInt8] = []

    public init(seed: UInt64 = 0) {
        self.seed = seed
        v1 = seed &+ Self.p1 &+ Self.p2
        v2 = seed &+ Self.p2
        v3 = seed
        v4 = seed &- Self.p1
        buffer.reserveCapacity(32)
    }

    @inline(__always) static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inline(__always) static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) static func merge(_ acc: UInt64, _ v: UInt64) -> UInt64 {
        (acc ^ round(0, v)) &* p1 &+ p4
    }

    @inline(__always) static func load64(_ p: UnsafeRawPointer) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) }
    @inline(__always) static func load32(_ p: UnsafeRawPointer) -> UInt32 { UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress, bytes.count > 0 else { return }
        var n = bytes.count
        total &+= UInt64(n)
        if !buffer.isEmpty {
            let take = min(32 - buffer.count, n)
            buffer.append(contentsOf: UnsafeRawBufferPointer(start: p, count: take))
            p += take
            n -= take
            if buffer.count < 32 { return }
            buffer.withUnsafeBytes { stripe($0.baseAddress!) }
            buffer.removeAll(keepingCapacity: true)
        }
        while n >= 32 {
            stripe(p)
            p += 32
            n -= 32
        }
        if n > 0 { buffer.append(contentsOf: UnsafeRawBufferPointer(start: p, count: n)) }
    }

    public mutating func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

    @inline(__always) private mutating func stripe(_ p: UnsafeRawPointer) {
        v1 = Self.round(v1, Self.load64(p))
        v2 = Self.round(v2, Self.load64(p + 8))
        v3 = Self.round(v3, Self.load64(p + 16))
        v4 = Self.round(v4, Self.load64(p + 24))
    }

    public func finalize() -> UInt64 {
        var h: UInt64
        if total >= 32 {
            h = Self.rotl(v1, 1) &+ Self.rotl(v2, 7) &+ Self.rotl(v3, 12) &+ Self.rotl(v4, 18)
            h = Self.merge(h, v1)
            h = Self.merge(h, v2)
            h = Self.merge(h, v3)
            h = Self.merge(h, v4)
        } else {
            h = seed &+ Self.p5
        }
        h &+= total
        buffer.withUnsafeBytes { raw in
            guard var p = raw.baseAddress else { return }
            var n = raw.count
            while n >= 8 {
                h ^= Self.round(0, Self.load64(p))
                h = Self.rotl(h, 27) &* Self.p1 &+ Self.p4
                p += 8
                n -= 8
            }
            if n >= 4 {
                h ^= UInt64(Self.load32(p)) &* Self.p1
                h = Self.rotl(h, 23) &* Self.p2 &+ Self.p3
                p += 4
                n -= 4
            }
            while n > 0 {
                h ^= UInt64(p.load(as: UInt8.self)) &* Self.p5
                h = Self.rotl(h, 11) &* Self.p1
                p += 1
                n -= 1
            }
        }
        h ^= h >> 33
        h &*= Self.p2
        h ^= h >> 29
        h &*= Self.p3
        h ^= h >> 32
        return h
    }

    /// The hash of `data` as 16 hex digits.
    public static func hex(_ data: Data) -> String {
        var h = XXH64()
        h.update(data)
        return hex(h.finalize())
    }

    public static func hex(_ value: UInt64) -> String {
        let s = String(value, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}

/// Hashes of model files, for the results' environment.
public enum FileHash {
    /// XXH64 of one file's bytes (read in 8 MiB pieces; never the whole file at once).
    public static func xxh64(path: String) throws -> String {
        guard let h = FileHandle(forReadingAtPath: path) else {
            throw LocatedError(path: path, "cannot open the file to hash it")
        }
        defer { try? h.close() }
        var hasher = XXH64()
        while true {
            guard let chunk = try h.read(upToCount: 8 << 20), !chunk.isEmpty else { break }
            hasher.update(chunk)
        }
        return XXH64.hex(hasher.finalize())
    }

    /// The files that make up a model at `path`: the file itself, or for a folder its
    /// weights (*.safetensors, *.gguf, *.bin) and config.json, sorted by name.
    public static func modelFiles(path: String) -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { return [] }
        guard isDir.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { $0 == "config.json" || $0.hasSuffix(".safetensors") || $0.hasSuffix(".gguf") || $0.hasSuffix(".bin") }
            .sorted().map { URL(fileURLWithPath: path).appendingPathComponent($0).path }
    }

    /// One hash for a model: XXH64 of its single file, or for a folder XXH64 over the
    /// concatenation, in name order, of each file's name, a NUL byte and its bytes.
    public static func model(path: String) throws -> (hash: String, bytes: Int, files: [String]) {
        let files = modelFiles(path: path)
        guard !files.isEmpty else { throw LocatedError(path: path, "no model files to hash") }
        if files.count == 1, files[0] == path {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            return (try xxh64(path: path), size, [URL(fileURLWithPath: path).lastPathComponent])
        }
        var hasher = XXH64()
        var total = 0
        for f in files {
            hasher.update(Data(URL(fileURLWithPath: f).lastPathComponent.utf8 + [0]))
            guard let h = FileHandle(forReadingAtPath: f) else { throw LocatedError(path: f, "cannot open the file to hash it") }
            defer { try? h.close() }
            while true {
                guard let chunk = try h.read(upToCount: 8 << 20), !chunk.isEmpty else { break }
                total += chunk.count
                hasher.update(chunk)
            }
        }
        return (XXH64.hex(hasher.finalize()), total, files.map { URL(fileURLWithPath: $0).lastPathComponent })
    }
}
