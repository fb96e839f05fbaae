/// The English text the synthetic tokenizer's merges are learned from.
///
/// Written for this project: a few paragraphs of original prose, followed by sentences
/// generated from a small grammar and word list with a fixed-seed generator, so the text
/// (and therefore every synthetic tokenizer) is the same on every machine and run. It mixes
/// the things real text has — capitals, punctuation, quotes, contractions, numbers, line
/// breaks — so the learned merges look like a real tokenizer's.
public enum SyntheticCorpus {
    /// The full training text (about 14 KB).
    public static let text: String = prose + generated()

    static let prose = """
        The lighthouse at the end of the harbour had not been painted in eleven years, and \
        the salt had taken most of the white from its walls. Mara kept it anyway. Every \
        evening she climbed the ninety-two steps, wiped the great lens with a soft cloth, \
        and lit the lamp before the first fishing boat turned for home.

        "Why do you still do it?" her brother asked one winter. "The ships have radios now. \
        They know where the rocks are."

        She thought about it for a while. "Because a radio can break," she said, "and a \
        light you can see with your own eyes is a kind of promise. It's not much, but it's \
        something I can keep."

        In the spring a storm came in from the west. It lasted three days. On the second \
        night the power failed across the whole coast, and the radios went quiet one after \
        another. Mara lit the old oil lamp by hand, the way her grandfather had shown her \
        when she was seven, and she sat beside it until morning. Twelve boats came back \
        that night. None of them struck the rocks.

        Down in the town, the baker opened early the next day. He didn't charge anyone for \
        bread, and he wouldn't say why. The children who had waited at the harbour wall \
        came up the hill with a basket of rolls and a jar of plum jam, and they left it at \
        the door of the lighthouse without knocking.

        Years later, when the harbour had a new concrete pier and a bright electric beacon, \
        people still talked about the storm. They'd point at the tower and tell visitors \
        the story, and the visitors would nod politely and take photographs. Mara was old \
        by then. She still climbed the steps in the evening, a little more slowly, and she \
        still wiped the lens, although nobody asked her to.

        Notes on the lamp, written inside the cover of the log book:
        1. Trim the wick to 3 mm before lighting.
        2. Check the oil: the tank holds 4.5 litres and burns about 0.3 litres an hour.
        3. Wind the clockwork every 6 hours; the lens turns once every 20 seconds.
        4. Write the time, the weather and the number of boats in the log.


        """

    // A tiny deterministic generator (SplitMix64), so the text never depends on the
    // platform's random numbers.
    private struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func pick(_ words: [String]) -> String { words[Int(next() % UInt64(words.count))] }
        mutating func number(_ upper: Int) -> Int { Int(next() % UInt64(upper)) }
    }

    static let names = ["Mara", "Tom", "Ines", "Oskar", "Lena", "the baker", "the old captain", "her brother", "a small boy", "the teacher"]
    static let adjectives = ["quiet", "bright", "old", "small", "heavy", "cold", "green", "tired", "careful", "strange", "warm", "empty", "narrow", "golden"]
    static let nouns = ["boat", "house", "lamp", "river", "garden", "window", "letter", "road", "bridge", "market", "kitchen", "forest", "story", "basket", "clock", "field", "island", "song", "ladder", "school"]
    static let pastVerbs = ["found", "carried", "painted", "opened", "watched", "followed", "repaired", "remembered", "counted", "cleaned", "visited", "crossed", "built", "forgot", "noticed"]
    static let places = ["near the harbour", "under the bridge", "behind the market", "at the top of the hill", "by the river", "in the garden", "on the island", "beside the road", "inside the old school", "across the field"]
    static let times = ["in the morning", "after dinner", "before the rain", "on Sunday", "at midnight", "every spring", "later that day", "the next week", "during the storm", "once a year"]
    static let adverbs = ["slowly", "carefully", "quietly", "happily", "suddenly", "again", "together", "almost", "finally", "never"]
    static let feelings = ["happy", "worried", "surprised", "proud", "sleepy", "curious", "hungry", "calm"]

    static func plural(_ noun: String) -> String {
        noun == "story" ? "stories" : noun + "s"
    }

    static func capitalized(_ s: String) -> String {
        guard let first = s.first else { return s }
        return first.uppercased() + s.dropFirst()
    }

    /// About 10 KB of sentences from the grammar, in paragraphs.
    static func generated() -> String {
        var g = Generator(state: 0x5155_414E_5442_454E)  // "QUANTBEN"
        var out = ""
        for paragraph in 0..<40 {
            var sentences: [String] = []
            for _ in 0..<(3 + g.number(3)) {
                let name = g.pick(names)
                let noun = g.pick(nouns)
                let sentence: String
                switch g.number(9) {
                case 0:
                    sentence = "\(capitalized(name)) \(g.pick(pastVerbs)) the \(g.pick(adjectives)) \(noun) \(g.pick(places))."
                case 1:
                    sentence = "\(capitalized(g.pick(times))), \(name) \(g.pick(adverbs)) \(g.pick(pastVerbs)) a \(g.pick(adjectives)) \(noun)."
                case 2:
                    sentence = "\"I can't find the \(noun),\" said \(name). \"It's \(g.pick(places)), isn't it?\""
                case 3:
                    sentence = "There were \(2 + g.number(98)) \(plural(noun)) \(g.pick(places)), and \(g.number(10)) of them were \(g.pick(adjectives))."
                case 4:
                    sentence = "Was the \(noun) really \(g.pick(adjectives))? \(capitalized(name)) wasn't sure, but they'd \(["seen", "heard", "made"][g.number(3)]) it \(g.pick(times))."
                case 5:
                    sentence = "\(capitalized(name)) felt \(g.pick(feelings)) when the \(g.pick(adjectives)) \(noun) \(g.pick(pastVerbs)) nothing at all."
                case 6:
                    sentence = "On day \(1 + g.number(365)) the \(noun) cost \(1 + g.number(20)).\(g.number(10))\(g.number(10)) coins; by \(1990 + g.number(35)) it cost \(10 + g.number(90))."
                case 7:
                    sentence = "We'll \(["walk", "wait", "sing", "look"][g.number(4)]) \(g.pick(places)) until the \(noun) is \(g.pick(adjectives)) again, and then we're going home."
                default:
                    sentence = "The \(plural(noun)) and the \(plural(g.pick(nouns))) were \(g.pick(adverbs)) \(g.pick(adjectives)); \(name) said so \(g.pick(times))."
                }
                sentences.append(sentence)
            }
            out += sentences.joined(separator: " ")
            out += paragraph % 7 == 6 ? "\n\n\n" : "\n\n"
        }
        return out
    }
}
