import Foundation
import PackagePlugin

/// Compiles the commit the binary is built from into it: before every build, `/bin/sh`
/// runs `git rev-parse HEAD` and `git status --porcelain --untracked-files=no` in the
/// package's folder and writes `BuildInfo.swift` (`BuildInfo.commit`, `BuildInfo.dirty`),
/// rewriting it only when it changes so an unchanged tree recompiles nothing. Outside a git
/// checkout (a source tarball), or without git, the commit is "unknown" and `dirty` nil.
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
        dirty=nil
        if [ "$commit" != unknown ]; then
            if status=$(git -C "$dir" status --porcelain --untracked-files=no 2>/dev/null); then
                if [ -n "$status" ]; then dirty=true; else dirty=false; fi
            fi
        fi
        tmp="$out.tmp.$$"
        printf '%s\n' \
            '// Generated before each build by Plugins/BuildInfoPlugin; do not edit.' \
            'public enum BuildInfo {' \
            '    /// `git rev-parse HEAD` of the package at build time, or "unknown".' \
            "    public static let commit = \"$commit\"" \
            '    /// Whether tracked files had uncommitted changes at build time (nil when unknown).' \
            "    public static let dirty: Bool? = $dirty" \
            '}' > "$tmp"
        if cmp -s "$tmp" "$out"; then rm -f "$tmp"; else mv -f "$tmp" "$out"; fi
        """#

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let outDir = context.pluginWorkDirectoryURL.appendingPathComponent("BuildInfo")
        try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
        return [
            .prebuildCommand(
                displayName: "Recording the git commit in BuildInfo.swift",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", Self.script, "sh", context.package.directoryURL.path, outDir.appendingPathComponent("BuildInfo.swift").path],
                outputFilesDirectory: outDir)
        ]
    }
}
