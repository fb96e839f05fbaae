import Foundation

/// A problem in an input file (a suite, a results file), named by file and, where known,
/// line and column, formatted as compilers do (`file:line:column: message`) so editors and
/// CI logs link to the spot.
public struct LocatedError: Error, CustomStringConvertible, Equatable, Sendable {
    public var path: String
    /// 1-based; nil when the problem is the file as a whole (unreadable, empty).
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(path: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        var s = path
        if let l = line {
            s += ":\(l)"
            if let c = column { s += ":\(c)" }
        }
        return s + ": " + message
    }
}
