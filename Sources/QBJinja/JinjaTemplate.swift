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
    /// formats (in the current time zone). Throws `ChatTemplateError.render` or `.raised`,
    /// or `.limitExceeded` naming the limit the template ran into.
    ///
    /// The sandbox. This is the one place template code runs, and a template is untrusted:
    /// it arrives inside a downloaded GGUF or tokenizer_config.json. Its rules:
    /// - No access outside the template: no files, no imports (`include`, `import`,
    ///   `extends` are refused when parsing), no Python attributes (`__class__`, ...), no
    ///   methods that modify lists or dicts (jinja2's ImmutableSandboxedEnvironment);
    ///   `range` is at most 100,000 long, as in jinja2's sandbox.
    /// - Bounded depth: expressions and blocks nest at most 100 deep and a tag holds at
    ///   most 5,000 operators when parsed; macro and recursive-loop calls at most 100 deep;
    ///   a value nests at most 1,000 deep; parse and render stop with an error when they have
    ///   used 1 MB of stack, whatever the cause.
    /// - Bounded work, memory and time (`limits`, `JinjaLimits.standard` by default):
    ///   every loop iteration and expression evaluation is an operation (2 million);
    ///   output and every block capture at most 8 MB; any single string, list or dict the
    ///   template makes at most 8 MB, counted as if nothing inside were shared and checked
    ///   before allocating where the size can be known first (`'x' * n`, `join`, `replace`,
    ///   `center`, widths, `tojson`); everything it makes added up at most 32 MB; and one
    ///   second of wall time. Searching, comparing, sorting and copying count as
    ///   operations in proportion to the bytes they walk.
    /// Real chat templates spend well under 1% of each limit on a long conversation.
    public func render(_ context: JinjaObject, now: Date = Date(), limits: JinjaLimits = .standard) throws -> String {
        try JinjaRenderer(templateName: name, now: now, limits: limits).render(body, frame: frame, context: context)
    }

    /// Renders as `render` does and says what the render spent: operations and bytes made.
    package func renderMeasured(
        _ context: JinjaObject, now: Date = Date(), limits: JinjaLimits = .standard
    ) throws -> (output: String, operations: Int, createdBytes: Int) {
        let r = JinjaRenderer(templateName: name, now: now, limits: limits)
        let output = try r.render(body, frame: frame, context: context)
        return (output, r.budget.operations, r.budget.created)
    }
}
