import CQBBuildInfo

/// The commit this binary was built from (CQBBuildInfo, written by Plugins/BuildInfoPlugin).
enum BuildInfo {
    /// `git rev-parse HEAD` of the package at build time, or "unknown".
    static let commit = String(cString: qb_build_commit())
    /// Whether tracked files had uncommitted changes at build time (nil when unknown).
    static let dirty: Bool? =
        switch qb_build_dirty() {
        case 0: false
        case 1: true
        default: nil
        }
}
