import Foundation
import HTTPTypes

/// What a request prefers, among the preferences of RFC 7240 the relay honours: `Prefer: respond-async`.
///
/// A request may carry several `Prefer` fields, each a comma-separated list of preferences, each a token with an
/// optional value and parameters (`respond-async, wait=10`, `handling=lenient; foo`). Names are case-insensitive;
/// preferences the relay does not know are ignored, as RFC 7240 §2 asks.
struct RequestPreferences: Sendable, Equatable {
    /// `respond-async`: answer once the work is accepted (202), not once it is done.
    var respondAsync = false

    /// The preference's name, and the value of `Preference-Applied` when the relay answered asynchronously.
    static let respondAsyncToken = "respond-async"

    init(respondAsync: Bool = false) {
        self.respondAsync = respondAsync
    }

    init(_ fields: HTTPFields) {
        for value in fields[values: .prefer] {
            for preference in value.split(separator: ",") {
                let name = preference.prefix { $0 != ";" && $0 != "=" }
                if name.trimmingCharacters(in: .whitespaces).lowercased() == Self.respondAsyncToken {
                    respondAsync = true
                }
            }
        }
    }
}
