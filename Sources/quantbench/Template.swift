import ArgumentParser
import Foundation
import QBSupport
import QBJinja
import QBText

/// `quantbench template`: renders a conversation with a model's chat template and prints
/// the prompt exactly (no trailing newline is added unless stdout is a terminal, so the
/// output can be compared byte for byte).
struct Template: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render a conversation with a chat template and print the prompt.",
        discussion: """
            The messages file is a JSON list of messages ({"role": ..., "content": ...}, \
            plus tool_calls etc.), or an object with a "messages" list and other template \
            variables ("tools", "add_generation_prompt", "bos_token", "eos_token", ...). \
            Models without a template get the fallback (--fallback).
            """)

    @Option(help: "Model whose template to use: a folder (tokenizer_config.json or chat_template.jinja), a tokenizer_config.json, or a .gguf file.")
    var model: String?

    @Option(help: "A Jinja chat template file (instead of --model).")
    var template: String?

    @Option(help: "JSON file with the conversation.")
    var messages: String

    @Flag(help: "End with the header of an assistant turn, for generation.")
    var addGenerationPrompt = false

    @Option(help: "Beginning-of-sequence text (default: the messages file's, else the model's).")
    var bosToken: String?

    @Option(help: "End-of-sequence text (default: the messages file's, else the model's).")
    var eosToken: String?

    @Option(help: "How to prepare the messages: llamacpp (fold system messages into the first user turn for templates without a system role; tool calls as JSON text for templates without tools) or transformers (exactly as given).")
    var mode: Mode = .llamacpp

    @Option(help: "Date strftime_now formats, YYYY-MM-DD (default: today).")
    var date: String?

    @Option(help: "Template for models without one: chatml or plain (\"role: content\" lines).")
    var fallback: Fallback = .chatml

    enum Mode: String, ExpressibleByArgument, CaseIterable { case llamacpp, transformers }
    enum Fallback: String, ExpressibleByArgument, CaseIterable { case chatml, plain }

    func validate() throws {
        guard (model == nil) != (template == nil) else {
            throw ValidationError("give exactly one of --model and --template")
        }
    }

    func run() throws {
        var chat: ChatTemplate
        var bos = "", eos = ""
        if let template {
            chat = try ChatTemplate.load(templateFile: template)
        } else {
            let found = try ChatTemplate.load(modelPath: model ?? "")
            bos = found.bosToken
            eos = found.eosToken
            if let t = found.template {
                chat = t
            } else {
                chat = fallback == .chatml ? .chatML : .plain
                let note = "note: \(found.origin) has no chat template; using the \(fallback.rawValue) fallback\n"
                FileHandle.standardError.write(Data(note.utf8))
            }
        }

        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: messages))
        } catch {
            throw ValidationError("cannot read --messages \(messages): \(FoundationErrorText.reason(error))")
        }
        var (conversation, context) = try ChatMessage.parse(json: data, source: messages)
        var tools: [JinjaValue]?
        if let t = context["tools"] {
            guard case .array(let list) = t else {
                throw ChatTemplateError.invalidMessages(source: messages, reason: "\"tools\" must be a list")
            }
            tools = list
            context["tools"] = nil
        }
        let generationPrompt = addGenerationPrompt || (context["add_generation_prompt"]?.isTruthy ?? false)
        context["add_generation_prompt"] = nil
        if let b = context["bos_token"]?.stringValue { bos = b }
        if let e = context["eos_token"]?.stringValue { eos = e }
        context["bos_token"] = nil
        context["eos_token"] = nil

        var options: ChatTemplateOptions = mode == .llamacpp ? .llamaCpp : .transformers
        if let date {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = .current
            f.dateFormat = "yyyy-MM-dd"
            guard let d = f.date(from: date) else { throw ValidationError("--date must be YYYY-MM-DD, got \(date)") }
            options.now = d
        }
        let prompt = try chat.render(
            messages: conversation, addGenerationPrompt: generationPrompt, bosToken: bosToken ?? bos,
            eosToken: eosToken ?? eos, tools: tools, extraContext: context, options: options)
        FileHandle.standardOutput.write(Data(prompt.utf8))
        if isatty(STDOUT_FILENO) != 0 && !prompt.hasSuffix("\n") { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }
}
