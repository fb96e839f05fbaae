import Foundation
import XCTest
import QBRunner
@testable import QBOpenAI
@testable import QBServe

/// The request checks without HTTP: what is accepted, what each refusal says.
final class RequestParsingTests: XCTestCase {
    func parse(_ text: String, chat: Bool = true) throws(APIError) -> CompletionRequest {
        try CompletionRequest.parse(Data(text.utf8), chat: chat)
    }

    func refusal(_ text: String, chat: Bool = true) -> APIError? {
        do {
            _ = try parse(text, chat: chat)
            return nil
        } catch {
            return error
        }
    }

    func testAcceptsOpenAIFields() throws {
        let r = try parse("""
            {"model": "m", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
             "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "seed": -3, "stop": ["x", "y"], "stream": true,
             "stream_options": {"include_usage": true}, "n": 1, "user": "u", "presence_penalty": 0.5}
            """)
        XCTAssertEqual(r.model, "m")
        XCTAssertEqual(r.maxTokens, 7)
        XCTAssertEqual(r.stop, ["x", "y"])
        XCTAssertTrue(r.stream && r.includeUsage)
        XCTAssertEqual(r.sampling.temperature, 0.5)
        XCTAssertEqual(r.sampling.topP, 0.9)
        XCTAssertEqual(r.sampling.topK, 0)
        XCTAssertEqual(r.sampling.seed, UInt64(bitPattern: -3))
        XCTAssertEqual(r.input, .chat([(.system, "s"), (.user, "ab")]))
        let t = try parse(#"{"prompt": ["once"], "stop": "z"}"#, chat: false)
        XCTAssertEqual(t.input, .text("once"))
        XCTAssertEqual(t.stop, ["z"])
        XCTAssertEqual(t.sampling.temperature, 1, "OpenAI's default temperature")
    }

    func testRefusalsNameTheParameter() {
        let cases: [(String, String?, String?)] = [
            ("{", nil, "invalid_json"),
            ("[]", nil, "invalid_json"),
            (#"{"messages": []}"#, "messages", nil),
            (#"{"messages": [{"role": "user", "content": "a"}], "max_tokens": 0}"#, "max_tokens", nil),
            (#"{"messages": [{"role": "user", "content": "a"}], "max_tokens": "5"}"#, "max_tokens", "invalid_type"),
            (#"{"messages": [{"role": "user", "content": "a"}], "temperature": -0.1}"#, "temperature", nil),
            (#"{"messages": [{"role": "user", "content": "a"}], "top_p": 0}"#, "top_p", nil),
            (#"{"messages": [{"role": "user", "content": "a"}], "bogus": 1}"#, "bogus", "unknown_parameter"),
            (#"{"messages": [{"role": "user", "content": "a"}], "stream_options": {"include_usage": true}}"#, "stream_options", nil),
            (#"{"messages": [{"role": "robot", "content": "a"}]}"#, "messages[0].role", nil),
            (#"{"messages": [{"role": "user", "content": "a"}], "stop": [1]}"#, "stop", "invalid_type"),
            (#"{"messages": [{"role": "user", "content": "a"}], "messages": []}"#, "messages", nil),
        ]
        for (body, param, code) in cases {
            guard let e = refusal(body) else { XCTFail("accepted: \(body)"); continue }
            XCTAssertEqual(e.status, 400, body)
            if let param { XCTAssertEqual(e.param, param, body) }
            if let code { XCTAssertEqual(e.code, code, body) }
        }
        XCTAssertEqual(refusal(#"{"prompt": 3}"#, chat: false)?.param, "prompt")
    }

    func testAdmissionErrorsMapToStatuses() {
        let full = ServeAPI.apiError(.queueFull(limit: 3))
        XCTAssertEqual(full.status, 503)
        XCTAssertEqual(full.retryAfter, 1)
        XCTAssertEqual(ServeAPI.apiError(.shuttingDown).status, 503)
        XCTAssertEqual(ServeAPI.apiError(.exceedsBudget(needed: 2, budget: 1)).status, 400)
        XCTAssertEqual(ServeAPI.apiError(.exceedsContext(needed: 9, context: 8)).code, "context_length_exceeded")
    }

    func testMetricsText() {
        let m = ServeMetrics(slots: 2, kvBudget: 100)
        m.request(endpoint: "/v1/models", status: 200)
        m.firstToken(seconds: 0.02)
        m.interToken(seconds: 0.003)
        let text = m.prometheusText()
        XCTAssertTrue(text.contains(#"quantbench_http_requests_total{endpoint="/v1/models",status="200"} 1"#))
        XCTAssertTrue(text.contains(#"quantbench_time_to_first_token_seconds_bucket{le="0.025"} 1"#))
        XCTAssertTrue(text.contains(#"quantbench_inter_token_latency_seconds_bucket{le="+Inf"} 1"#))
        XCTAssertTrue(text.contains("quantbench_slots_total 2"))
        XCTAssertNotNil(text.range(of: #"process_resident_memory_bytes [1-9][0-9]{5,}\n"#, options: .regularExpression), text)
        if MemoryStats.current().allocatedBytes != nil {
            XCTAssertNotNil(text.range(of: #"quantbench_tcmalloc_allocated_bytes [1-9][0-9]*\n"#, options: .regularExpression), text)
        }
    }
}
