import Foundation
import PackagePlugin

/// Compiles the commit the binary is built from into it: before every build, `/bin/sh`
/// runs `git rev-parse HEAD` and `git status --porcelain --untracked-files=no` in the
/// package's folder and writes `GeneratedBuildInfo.swift`: `qb_build_commit` and
/// `qb_build_dirty`, the C functions CQBBuildInfo declares, rewriting it only when it changes
/// so an unchanged tree recompiles nothing. Outside a git checkout (a source tarball), or
/// without git, the commit is "unknown" and dirty -1 (unknown).
@main
struct BuildInfoPlugin: BuildToolPlugin {
    static let script = #"""
        dir="$1"; out="$2"
        commit=$(git -C "$dir" rev-parse HEAD 2>/dev/null) || commit=unknown
        case "$commit" in
            [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) ;;
            *) commit=unknown ;;
        esac
        [ ${#commit} -eq 40 ] || commit=unknown
        dirty=-1
        if [ "$commit" != unknown ]; then
            if status=$(git -C "$dir" status --porcelain --untracked-files=no 2>/dev/null); then
                if [ -n "$status" ]; then dirty=1; else dirty=0; fi
            fi
        fi
        tmp="$out.tmp.$$"
        printf '%s\n' \
            '// Generated before each build by Plugins/BuildInfoPlugin; do not edit.' \
            "private let commit: StaticString = \"$commit\"" \
            '@_cdecl("qb_build_commit") public func qbBuildCommit() -> UnsafePointer<CChar> {' \
            '    UnsafeRawPointer(commit.utf8Start).assumingMemoryBound(to: CChar.self)' \
            '}' \
            '@_cdecl("qb_build_dirty") public func qbBuildDirty() -> Int32 { '"$dirty"' }' > "$tmp"
        if cmp -s "$tmp" "$out"; then rm -f "$tmp"; else mv -f "$tmp" "$out"; fi
        """#

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let outDir = context.pluginWorkDirectoryURL.appendingPathComponent("BuildInfo")
        try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
        return [
            .prebuildCommand(
                displayName: "Recording the git commit in GeneratedBuildInfo.swift",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", Self.script, "sh", context.package.directoryURL.path, outDir.appendingPathComponent("GeneratedBuildInfo.swift").path],
                outputFilesDirectory: outDir)
        ]
    }
}
