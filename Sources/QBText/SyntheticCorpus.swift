import QBSupport

/// The English text the synthetic tokenizer's merges are learned from.
///
/// Written for this project: a few paragraphs of original prose, followed by sentences
/// generated from a small grammar and word list with a fixed-seed generator, so the text
/// (and therefore every synthetic tokenizer) is the same on every machine and run. It mixes
/// the things real text has — capitals, punctuation, quotes, contractions, numbers, line
/// breaks — so the learned merges look like a real tokenizer's.
public enum SyntheticCorpus {
    /// The full training text (about 18 KB).
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

        The clockmaker on Wharf Street repaired watches for half the county. His workshop \
        smelled of brass polish and coffee, and every surface was covered with springs, \
        screws, magnifying glasses and tiny brushes. Customers often asked how he could \
        remember which part belonged to which watch. He would tap the side of his head and \
        say, "Everything has a place. If you know where it lives, you'll never lose it."

        When his daughter Priya was twelve, she built her first clock from an old biscuit \
        tin, a bicycle chain and a pendulum made from a fishing weight. It gained about \
        forty minutes a day, which she thought was wonderful: "It's running ahead into the \
        future," she explained. Her father laughed so hard that he had to sit down. He kept \
        that clock on the shelf above his bench for the rest of his life, and visitors were \
        told, quite seriously, that it was the most valuable object in the building.

        Questions people asked at the workshop, in order of popularity: Can you fix this \
        today? Is it worth repairing? Why does it stop at night? Would you sell me that \
        strange clock on the shelf? (The answer to the last one was always no.)


        """

    // SplitMix64, so the text never depends on the platform's random numbers.
    private struct Generator {
        var mix: SplitMix64
        init(state: UInt64) { mix = SplitMix64(state: state) }
        mutating func pick(_ words: [String]) -> String { words[Int(mix.next() % UInt64(words.count))] }
        mutating func number(_ upper: Int) -> Int { Int(mix.next() % UInt64(upper)) }
    }

    static let names = [
        "Mara", "Tom", "Ines", "Oskar", "Lena", "Farid", "Greta", "Pablo", "Yuki", "Amara",
        "the baker", "the old captain", "her brother", "a small boy", "the teacher",
        "the carpenter", "my grandmother", "the postman", "a young doctor", "the mayor",
    ]
    static let adjectives = [
        "quiet", "bright", "old", "small", "heavy", "cold", "green", "tired", "careful", "strange",
        "warm", "empty", "narrow", "golden", "wooden", "broken", "silver", "dusty", "gentle", "crooked",
        "enormous", "tiny", "wet", "noisy", "clever", "patient", "yellow", "purple", "ancient", "modern",
        "simple", "curious", "friendly", "dangerous", "beautiful", "ordinary", "famous", "secret",
        "invisible", "frozen", "shiny", "sturdy", "fragile", "hollow", "muddy", "velvet", "wrinkled",
        "rusty", "fearless", "delicate", "magnificent", "peculiar", "grumpy", "cheerful",
    ]
    static let nouns = [
        "boat", "house", "lamp", "river", "garden", "window", "letter", "road", "bridge", "market",
        "kitchen", "forest", "story", "basket", "clock", "field", "island", "song", "ladder", "school",
        "mountain", "village", "bicycle", "candle", "blanket", "harbour", "engine", "library", "painting",
        "tower", "station", "orchard", "chimney", "bucket", "compass", "kettle", "notebook", "umbrella",
        "wagon", "meadow", "cottage", "lantern", "puzzle", "violin", "feather", "pocket", "shadow",
        "teapot", "hammer", "pillow", "garage", "museum", "rocket", "turtle", "pebble", "carpet",
        "telescope", "waterfall", "sandwich", "elephant", "journey", "mirror", "festival", "volcano",
        "keyboard", "treasure", "penguin", "dragonfly", "question", "sculpture", "envelope", "balcony",
        "parachute", "cathedral", "squirrel", "whistle", "thunderstorm", "microscope", "quilt",
    ]
    static let pastVerbs = [
        "found", "carried", "painted", "opened", "watched", "followed", "repaired", "remembered",
        "counted", "cleaned", "visited", "crossed", "built", "forgot", "noticed", "borrowed",
        "polished", "measured", "discovered", "described", "explained", "protected", "delivered",
        "collected", "imagined", "photographed", "sketched", "unlocked", "searched", "admired",
        "ignored", "replaced", "decorated", "questioned", "wrapped", "balanced", "climbed", "guarded",
        "invented", "rescued", "whispered", "juggled", "examined", "celebrated", "organized",
        "swallowed", "scattered", "translated", "hypnotized", "weighed",
    ]
    static let places = [
        "near the harbour", "under the bridge", "behind the market", "at the top of the hill",
        "by the river", "in the garden", "on the island", "beside the road", "inside the old school",
        "across the field", "next to the station", "below the tower", "outside the library",
        "along the narrow street", "around the village square", "between the two mountains",
        "through the orchard", "upstairs in the cottage", "at the edge of the forest",
    ]
    static let times = [
        "in the morning", "after dinner", "before the rain", "on Sunday", "at midnight",
        "every spring", "later that day", "the next week", "during the storm", "once a year",
        "on Tuesday afternoon", "in early December", "before breakfast", "at sunset",
        "every other Thursday", "in the summer of 1987", "after the long winter",
    ]
    static let adverbs = [
        "slowly", "carefully", "quietly", "happily", "suddenly", "again", "together", "almost",
        "finally", "never", "eagerly", "nervously", "proudly", "patiently", "secretly", "gladly",
        "barely", "politely", "bravely", "gently",
    ]
    static let feelings = [
        "happy", "worried", "surprised", "proud", "sleepy", "curious", "hungry", "calm",
        "grateful", "lonely", "excited", "confused", "relieved", "embarrassed", "hopeful",
    ]

    static func plural(_ noun: String) -> String {
        noun == "story" ? "stories" : noun + "s"
    }

    static func capitalized(_ s: String) -> String {
        guard let first = s.first else { return s }
        return first.uppercased() + s.dropFirst()
    }

    /// About 15 KB of sentences from the grammar, in paragraphs.
    static func generated() -> String {
        var g = Generator(state: 0x5155_414E_5442_454E)  // "QUANTBEN"
        var out = ""
        for paragraph in 0..<52 {
            var sentences: [String] = []
            for _ in 0..<(3 + g.number(3)) {
                let name = g.pick(names)
                let noun = g.pick(nouns)
                let sentence: String
                switch g.number(12) {
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
                case 9:
                    sentence = "Nobody knew why \(name) had \(g.pick(pastVerbs)) the \(g.pick(adjectives)) \(noun); perhaps it was \(g.pick(adjectives)) or \(g.pick(adjectives))."
                case 10:
                    sentence = "\"Where's my \(noun)?\" asked \(name). \"I left it \(g.pick(places)) \(g.pick(times)).\""
                case 11:
                    sentence = "\(capitalized(g.pick(adverbs))), \(name) \(g.pick(pastVerbs)) \(2 + g.number(9)) \(plural(noun)) and \(g.pick(pastVerbs)) the \(plural(g.pick(nouns)))."
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
