import Foundation
import HTTPTypes

/// What a request prefers, among the preferences of RFC 7240 the relay honours: `Prefer: respond-async` and
/// `Prefer: dry-run`.
///
/// A request may carry several `Prefer` fields, each a comma-separated list of preferences, each a token with an
/// optional value and parameters (`respond-async, wait=10`, `handling=lenient; foo`). Names are case-insensitive;
/// preferences the relay does not know are ignored, as RFC 7240 §2 asks.
struct RequestPreferences: Sendable, Equatable {
    /// `respond-async`: answer once the work is accepted (202), not once it is done.
    var respondAsync = false

    /// The preference's name, and the value of `Preference-Applied` when the relay answered asynchronously.
    static let respondAsyncToken = "respond-async"

    /// `dry-run` (the native and Expo-compatible push routes): validate and answer what would be sent upstream;
    /// nothing is sent, admitted, counted or stored.
    var dryRun = false

    /// The dry run's name, and the value of `Preference-Applied` when the relay answered a dry run it asked for.
    static let dryRunToken = "dry-run"

    init(respondAsync: Bool = false, dryRun: Bool = false) {
        self.respondAsync = respondAsync
        self.dryRun = dryRun
    }

    init(_ fields: HTTPFields) {
        for value in fields[values: .prefer] {
            for preference in value.split(separator: ",") {
                let name = preference.prefix { $0 != ";" && $0 != "=" }
                    .trimmingCharacters(in: .whitespaces).lowercased()
                if name == Self.respondAsyncToken { respondAsync = true }
                if name == Self.dryRunToken { dryRun = true }
            }
        }
    }
}
