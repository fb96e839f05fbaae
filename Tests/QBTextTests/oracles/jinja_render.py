#!/usr/bin/env python3
"""Reference renders of Jinja chat templates, for QBTextTests' Jinja/ChatTemplate tests.

Usage: jinja_render.py REQUEST.json RESPONSE.json

REQUEST: {"cases": [CASE, ...]}. Each CASE:
  {"template": source text,
   "context": {...},            the variables the template sees, keys in order
   "now": "YYYY-MM-DD",         optional; what strftime_now formats (default: today)
   "mode": "transformers"}      optional, the default: render `context` exactly as given
                                with the environment transformers builds
        | "llamacpp"            first rewrite the messages as llama.cpp's
                                minja::chat_template::apply did at the commit the
                                goldens come from (see below), then render; the context
                                needs "messages", "bos_token", "eos_token",
                                "add_generation_prompt" and may have "tools" and
                                "builtin_tools"
        | "generator"           the workarounds of llama.cpp's
                                scripts/update_jinja_goldens.py: arguments parsed from
                                JSON when the template reads them as an object, and a
                                second try after null contents become ""
RESPONSE: {"results": [{"output": text} | {"error": "ExceptionType: message"}, ...],
           "jinja2": version}

Exit status 3 means jinja2 (3.1 or newer) is not importable.

The environment is the one transformers' chat_template_utils._compile_jinja_template
builds (transformers 4.4x-5.x): ImmutableSandboxedEnvironment(trim_blocks=True,
lstrip_blocks=True) with the loopcontrols extension and a {% generation %} tag, a
`tojson` filter that is json.dumps(ensure_ascii=False, indent=..., separators=...,
sort_keys=...), and the globals raise_exception, strftime_now, dict and namespace. Only
strftime_now differs: it formats the fixed date of the case, so renders are repeatable.
"""
import copy
import datetime
import json
import sys

try:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError as error:  # the Swift tests turn this into a skip
    print(f"jinja2 not importable: {error}", file=sys.stderr)
    sys.exit(3)


class GenerationTag(jinja2.ext.Extension):
    """transformers' AssistantTracker without the tracking: {% generation %} renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_environment(now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    class TemplateDict:
        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    return env


def llamacpp_messages(source, messages, template, base_context):
    """A port of minja::chat_template::apply (llama.cpp common/chat-template.hpp at a469f536)."""
    supports_tools = "tools" in source
    requires_object_arguments = (
        "tool_call.arguments | items" in source or "tool_call.arguments | tojson" in source)

    # supports_system_role: does a system message's text survive a plain render?
    try:
        probe = template.render(
            messages=[{"role": "system", "content": "<System Needle>"}, {"role": "user", "content": "Hey"}],
            add_generation_prompt=False, **base_context)
        supports_system_role = "<System Needle>" in probe
    except Exception:
        supports_system_role = False

    if not (requires_object_arguments or not supports_system_role or not supports_tools):
        return messages

    out = []
    pending_system = ""

    def flush_sys():
        nonlocal pending_system
        if pending_system:
            out.append({"role": "user", "content": pending_system})
            pending_system = ""

    for message in copy.deepcopy(messages):
        if "role" not in message or "content" not in message:
            raise ValueError("message must have 'role' and 'content' fields: " + json.dumps(message))
        role = message["role"]
        if "tool_calls" in message:
            if requires_object_arguments or not supports_tools:
                for tool_call in message["tool_calls"]:
                    if tool_call.get("type") == "function":
                        function = tool_call["function"]
                        # llama.cpp throws on arguments that are already an object; like
                        # ChatTemplate, this port leaves them as they are.
                        if isinstance(function["arguments"], str):
                            function["arguments"] = json.loads(function["arguments"])
            if not supports_tools:
                content = message["content"]
                tool_calls = []
                for tool_call in message["tool_calls"]:
                    if tool_call.get("type") != "function":
                        continue
                    function = tool_call["function"]
                    tc = {"name": function["name"], "arguments": function["arguments"]}
                    if "id" in tool_call:
                        tc["id"] = tool_call["id"]
                    tool_calls.append(tc)
                obj = {"tool_calls": tool_calls}
                if content is not None and content != "":
                    obj["content"] = content
                message["content"] = json.dumps(obj, indent=2, ensure_ascii=False)
                del message["tool_calls"]
        if not supports_tools and role == "tool":
            message["role"] = "user"
            obj = {"tool_response": {"tool": message["name"], "content": message["content"]}}
            if "tool_call_id" in message:
                obj["tool_response"]["tool_call_id"] = message["tool_call_id"]
            message["content"] = json.dumps(obj, indent=2, ensure_ascii=False)
            del message["name"]
        if message["content"] is not None and not supports_system_role:
            content = message["content"]
            if role == "system":
                if pending_system:
                    pending_system += "\n"
                pending_system += content
                continue
            if role == "user":
                if pending_system:
                    message["content"] = pending_system + ("" if content == "" else "\n" + content)
                    pending_system = ""
            else:
                flush_sys()
        out.append(message)
    flush_sys()
    return out


_compiled = {}


def compiled(source, now_text):
    """Compiling is most of jinja2's cost; requests repeat templates, so keep them."""
    key = (source, now_text)
    if key not in _compiled:
        now = datetime.datetime.strptime(now_text, "%Y-%m-%d") if now_text else datetime.datetime.now()
        _compiled[key] = make_environment(now).from_string(source)
    return _compiled[key]


def render_case(case):
    source = case["template"]
    template = compiled(source, case.get("now"))
    context = case["context"]
    mode = case.get("mode", "transformers")
    if mode == "transformers":
        return template.render(**context)
    if mode == "llamacpp":
        base = {"bos_token": context["bos_token"], "eos_token": context["eos_token"]}
        messages = llamacpp_messages(source, context["messages"], template, base)
        variables = {"messages": messages, "add_generation_prompt": context["add_generation_prompt"], **base}
        if "tools" in context:
            variables["tools"] = context["tools"]
            variables["builtin_tools"] = context.get("builtin_tools", ["wolfram_alpha", "brave_search"])
        return template.render(**variables)
    if mode == "generator":
        render_context = copy.deepcopy(context)
        if "tool_call.arguments | items" in source or "tool_call.arguments | tojson" in source:
            for message in render_context["messages"]:
                for tool_call in message.get("tool_calls", []):
                    if tool_call.get("type") == "function":
                        tool_call["function"]["arguments"] = json.loads(tool_call["function"]["arguments"])
        try:
            return template.render(**render_context)
        except Exception:
            for message in render_context["messages"]:
                if message.get("content") is None:
                    message["content"] = ""
            return template.render(**render_context)
    raise ValueError(f"unknown mode {mode!r}")


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    results = []
    for case in request["cases"]:
        try:
            results.append({"output": render_case(case)})
        except Exception as error:  # reported per case; the Swift side decides
            results.append({"error": f"{type(error).__name__}: {error}"})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"results": results, "jinja2": jinja2.__version__}, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
