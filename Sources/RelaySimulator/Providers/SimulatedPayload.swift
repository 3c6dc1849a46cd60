/// The last payload a simulated provider accepted for one device token: what the device was sent, for a test or the
/// demo to show (``ProviderSimulator/lastPayload(for:)``, `GET /simulator/last-payload/<token>`).
package struct SimulatedPayload: Sendable, Hashable {
    /// ``SimulatedProvider/apns``, ``SimulatedProvider/fcm`` or ``SimulatedProvider/expoSend``.
    package var provider: SimulatedProvider
    /// APNs: `apns-push-type`, `apns-priority` and `apns-topic` as sent (those absent are left out); FCM and Expo:
    /// none.
    package var headers: [String: String]
    /// The JSON text. APNs: the request body; FCM: the `message` object; Expo: the message that named the token (as
    /// sent, with its whole `to`).
    package var body: [UInt8]
    /// Why a device would ignore the push, as ``SimulatedRequest/ignoredByDevice``; `nil` when it would not.
    package var ignoredByDevice: String?

    package init(
        provider: SimulatedProvider,
        headers: [String: String] = [:],
        body: [UInt8],
        ignoredByDevice: String? = nil
    ) {
        self.provider = provider
        self.headers = headers
        self.body = body
        self.ignoredByDevice = ignoredByDevice
    }

    /// The body decoded as UTF-8.
    package var bodyText: String {
        String(decoding: self.body, as: UTF8.self)
    }

    /// The body parsed as JSON.
    package var json: SimulatorJSON? {
        SimulatorJSON(parsing: self.body)
    }

    /// `{"provider", "headers", "body"}` (plus `"ignoredByDevice"` when set): the answer of
    /// `GET /simulator/last-payload/<token>`, headers sorted by name, the body as JSON.
    package var document: SimulatorJSON {
        var members: [(key: String, value: SimulatorJSON)] = [
            ("provider", .string(self.provider.rawValue)),
            ("headers", .object(self.headers.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ("body", self.json ?? .string(self.bodyText)),
        ]
        if let ignoredByDevice = self.ignoredByDevice {
            members.append(("ignoredByDevice", .string(ignoredByDevice)))
        }
        return .object(members)
    }
}

/// The last ``SimulatedPayload`` of each device token, for at most `limit` tokens: when a new token would make one
/// more, the token updated least recently is forgotten.
///
/// ### Implementation
/// A dictionary, and the tokens in update order with the sequence number of each update; an update appends and leaves
/// the token's earlier position stale (its number no longer matches). Eviction pops from the front, skipping stale
/// positions; when popped and stale positions make the order longer than twice the limit (a few tokens sent to again
/// and again, or many new ones) it is rebuilt from the dictionary, so memory stays in proportion to `limit` and the
/// work per update is amortised O(log limit).
struct LastPayloads: Sendable {
    let limit: Int
    private var entries: [String: Entry] = [:]
    private var order: [(token: String, sequence: UInt64)] = []
    private var head = 0
    private var nextSequence: UInt64 = 0

    private struct Entry: Sendable {
        var sequence: UInt64
        var payload: SimulatedPayload
    }

    init(limit: Int) {
        self.limit = max(limit, 0)
    }

    /// How many tokens have a payload.
    var count: Int {
        self.entries.count
    }

    /// How many positions the update order holds, stale ones included: at most twice ``limit`` after any update.
    var positions: Int {
        self.order.count
    }

    func payload(for token: String) -> SimulatedPayload? {
        self.entries[token]?.payload
    }

    mutating func record(_ payload: SimulatedPayload, for token: String) {
        guard self.limit > 0 else {
            return
        }
        let sequence = self.nextSequence
        self.nextSequence += 1
        self.entries[token] = Entry(sequence: sequence, payload: payload)
        self.order.append((token, sequence))
        while self.entries.count > self.limit, self.head < self.order.count {
            let oldest = self.order[self.head]
            self.head += 1
            if self.entries[oldest.token]?.sequence == oldest.sequence {
                self.entries[oldest.token] = nil
            }
        }
        if self.order.count > 2 * self.limit {
            self.order = self.entries.map { ($0.key, $0.value.sequence) }.sorted { $0.sequence < $1.sequence }
            self.head = 0
        }
    }
}
