import Foundation
import XCTest
@testable import QBGeneration

final class SamplingParametersTests: XCTestCase {
    func testDefaultsAreGreedyWithLlamaCppTruncation() throws {
        let p = SamplingParameters()
        XCTAssertEqual(p.temperature, 0)
        XCTAssertEqual(p.topK, 40)
        XCTAssertEqual(p.topP, 0.95)
        XCTAssertEqual(p.minP, 0.05)
        XCTAssertEqual(p.repeatLastN, 64)
        XCTAssertEqual(p.repeatPenalty, 1)
        XCTAssertNoThrow(try p.validate())
        XCTAssertNoThrow(try SamplingParameters.llama2c(seed: 1).validate())
    }

    func testEachRangeIsChecked() {
        func error(_ change: (inout SamplingParameters) -> Void) -> String? {
            var p = SamplingParameters()
            change(&p)
            do { try p.validate(vocabularySize: 100); return nil } catch { return "\(error)" }
        }
        XCTAssertEqual(error { $0.temperature = -0.1 }, "temperature must be a finite number >= 0 (0 is greedy), got -0.1")
        XCTAssertNotNil(error { $0.temperature = .nan })
        XCTAssertNotNil(error { $0.temperature = .infinity })
        XCTAssertEqual(error { $0.topK = -1 }, "top-k must be >= 0 (0 keeps every token), got -1")
        XCTAssertEqual(error { $0.topP = 0 }, "top-p must be in (0, 1] (1 turns it off), got 0.0")
        XCTAssertNotNil(error { $0.topP = 1.01 })
        XCTAssertNil(error { $0.topP = 1 })
        XCTAssertNotNil(error { $0.minP = -0.01 })
        XCTAssertNotNil(error { $0.minP = 1.5 })
        XCTAssertNil(error { $0.minP = 0 })
        XCTAssertNotNil(error { $0.repeatPenalty = 0 })
        XCTAssertNotNil(error { $0.repeatLastN = -2 })
        XCTAssertNil(error { $0.repeatLastN = -1 })
        XCTAssertNotNil(error { $0.presencePenalty = .nan })
        XCTAssertNotNil(error { $0.frequencyPenalty = -.infinity })
        XCTAssertNil(error { $0.presencePenalty = -1.5 })
        XCTAssertEqual(error { $0.logitBias = [LogitBias(token: 100, bias: 1)] }, "logit-bias must be a token id in 0..<100, got token 100")
        XCTAssertNotNil(error { $0.logitBias = [LogitBias(token: -1, bias: 1)] })
        XCTAssertNotNil(error { $0.logitBias = [LogitBias(token: 1, bias: .nan)] })
        XCTAssertNotNil(error { $0.logitBias = [LogitBias(token: 1, bias: .infinity)] })
        XCTAssertNil(error { $0.logitBias = [LogitBias(token: 1, bias: -.infinity)] })
    }

    func testLlama2cRejectsWhatRunCCannotDo() {
        var p = SamplingParameters.llama2c(seed: 1)
        p.repeatPenalty = 1.1
        XCTAssertThrowsError(try p.validate()) {
            XCTAssertEqual($0 as? SamplingParameterError, .unsupported(parameter: "repeat-penalty", sampler: .llama2c))
        }
        p = .llama2c(seed: 1)
        p.logitBias = [LogitBias(token: 3, bias: 1)]
        XCTAssertThrowsError(try p.validate())
        p = .llama2c(seed: 1)
        p.topK = 5  // ignored, as documented
        XCTAssertNoThrow(try p.validate())
    }

    func testGenerationParametersCheckMaxTokensAndStops() {
        XCTAssertThrowsError(try GenerationParameters(maxTokens: -1).validate())
        XCTAssertThrowsError(try GenerationParameters(stop: ["ok", ""]).validate())
        XCTAssertNoThrow(try GenerationParameters(maxTokens: 0, stop: ["ok"]).validate())
    }

    func testCodableRoundTripAndPartialJSON() throws {
        var p = SamplingParameters(temperature: 0.7, topK: 0, seed: 99)
        p.logitBias = [LogitBias(token: 2, bias: -.infinity), LogitBias(token: 5, bias: 1.5)]
        let params = GenerationParameters(maxTokens: 7, stop: ["\n\n"], sampling: p)
        let data = try JSONEncoder().encode(params)
        XCTAssertEqual(try JSONDecoder().decode(GenerationParameters.self, from: data), params)
        let partial = try JSONDecoder().decode(
            SamplingParameters.self, from: Data(#"{"temperature": 0.9, "sampler": "llama2c", "top_p": 0.5}"#.utf8))
        XCTAssertEqual(partial, SamplingParameters(sampler: .llama2c, temperature: 0.9, topP: 0.5))
        XCTAssertThrowsError(try JSONDecoder().decode(SamplingParameters.self, from: Data(#"{"sampler": "mirostat"}"#.utf8)))
    }
}
