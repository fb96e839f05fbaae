import Foundation

/// Foundation's errors (NSCocoaErrorDomain, NSPOSIXErrorDomain) in the words the rest of
/// the program uses: `path: what is wrong`, one line, instead of
/// `Error Domain=NSCocoaErrorDomain Code=260 "(null)" UserInfo={...}`.
public enum FoundationErrorText {
    /// True for errors Foundation made (not the program's own typed errors).
    public static func isFoundation(_ error: any Error) -> Bool {
        if error is CocoaError || error is POSIXError { return true }
        let domain = (error as NSError).domain
        return domain == NSCocoaErrorDomain || domain == NSPOSIXErrorDomain
    }

    /// What went wrong, without the path: "no such file", "permission denied", ...; any
    /// other error as its description, cut to a readable length.
    public static func reason(_ error: any Error) -> String {
        guard isFoundation(error) else { return OutputGuard.shown("\(error)", limit: 300) }
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code))).lowercased()
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))).lowercased() }
        switch ns.code {
        case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue: return "no such file or folder"
        case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue: return "permission denied"
        case CocoaError.fileWriteFileExists.rawValue: return "a file of that name is in the way"
        case CocoaError.fileWriteOutOfSpace.rawValue: return "no space left on the device"
        case CocoaError.fileWriteVolumeReadOnly.rawValue: return "the file system is read-only"
        case CocoaError.fileReadInvalidFileName.rawValue, CocoaError.fileWriteInvalidFileName.rawValue: return "not a valid file name"
        case CocoaError.fileReadCorruptFile.rawValue: return "the file is damaged or not in the expected format"
        case CocoaError.fileReadInapplicableStringEncoding.rawValue, CocoaError.fileReadUnknownStringEncoding.rawValue:
            return "not text in a known encoding"
        case CocoaError.fileReadTooLarge.rawValue: return "the file is too large"
        case CocoaError.fileLocking.rawValue: return "the file is locked"
        case CocoaError.fileReadUnknown.rawValue: return "cannot read the file"
        case CocoaError.fileWriteUnknown.rawValue: return "cannot write the file"
        default: return "file error \(ns.code)"
        }
    }

    /// The path a Foundation error is about, when it names one.
    public static func path(_ error: any Error) -> String? {
        guard isFoundation(error) else { return nil }
        let info = (error as NSError).userInfo
        if let p = info[NSFilePathErrorKey] as? String { return p }
        if let u = info[NSURLErrorKey] as? URL { return u.path }
        return nil
    }

    /// `path: reason` (or the reason alone), one line.
    public static func describe(_ error: any Error) -> String {
        let r = reason(error)
        return path(error).map { "\(OutputGuard.shown($0)): \(r)" } ?? r
    }
}
