import Foundation

/// A parsed Jinja template. Parse once, render many times, from any thread: the parsed
/// form is immutable and each render keeps its state to itself.
///
/// The dialect is Python jinja2's as Hugging Face transformers configures it for chat
/// templates (sandboxed, `trim_blocks` and `lstrip_blocks`, the loopcontrols extension,
/// `raise_exception`, `strftime_now`, `namespace`, `dict`, and a `tojson` that keeps
/// non-ASCII text). Templates needing `include`, `import`, `extends` or the few
/// unimplemented filters are rejected when parsed, with the construct named.
public struct JinjaTemplate: Sendable {
    /// Names the template in errors (a file path or a model name).
    public let name: String
    /// The template text and the whitespace rules it was parsed with.
    public let source: String
    public let whitespace: JinjaWhitespace
    let body: [JinjaNode]
    let frame: JinjaFrame

    /// Parses `source`. Throws `ChatTemplateError.syntax` (or `.unsupported`) with the
    /// line and what is wrong.
    public init(source: String, name: String = "template", whitespace: JinjaWhitespace = .chatTemplates) throws {
        self.name = name
        self.source = source
        self.whitespace = whitespace
        (body, frame) = JinjaScoping.annotate(try JinjaParser.parse(source, name: name, whitespace: whitespace))
    }

    /// Renders with `context` as the template's variables. `now` is what `strftime_now`
    /// formats (in the current time zone). Throws `ChatTemplateError.render` or `.raised`.
    public func render(_ context: JinjaObject, now: Date = Date()) throws -> String {
        try JinjaRenderer(templateName: name, now: now).render(body, frame: frame, context: context)
    }
}
