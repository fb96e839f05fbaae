import Foundation
import XCTest

/// Where the tests find what they read: this repository (its Prompts/) and the shared
/// third-party fixtures beside it (../shared/fixtures, never copied into the repository).
public enum Fixtures {
    /// The repository root (this file is Tests/QBTestSupport/Fixtures.swift).
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The repository's suites.
    public static let prompts = repository.appendingPathComponent("Prompts")

    /// ../shared/fixtures, resolved.
    public static let shared = repository.appendingPathComponent("../shared/fixtures").standardizedFileURL

    /// A fixture under ../shared/fixtures, or an XCTSkip naming what is missing.
    public static func url(_ relative: String) throws -> URL {
        let url = shared.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("fixture \(relative) not found at \(url.path)")
        }
        return url
    }

    /// `url(relative).path`.
    public static func path(_ relative: String) throws -> String { try url(relative).path }

    /// A fresh temporary folder whose name says which test made it; the caller removes it.
    public static func temporaryDirectory(_ name: String) throws -> URL {
        let u = FileManager.default.temporaryDirectory
            .appendingPathComponent("qb-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
        return u
    }
}
