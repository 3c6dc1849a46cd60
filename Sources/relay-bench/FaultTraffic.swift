import ArgumentParser
import Foundation
import RelayCore
import RelayHTTP2

/// The pushes of a fault scenario and the receipts that follow them, through the relay's native API.
///
/// Pushes go in APNs-shaped requests, mostly single ones with a batch of 20 after every 20 (so 2,000 pushes are
/// 1,050 requests), every third request asking `Prefer: respond-async`; each push has its own device token, so the
/// per-device limit never applies. They are sent open loop at a fixed request rate, so a fault switched on in the
/// middle hits the pushes sent while it lasts, as an outage hits real traffic.
struct FaultTraffic {
    let pool: HTTP2Pool
    let url: String
    let key: String
    /// Makes each push's token unique to its scenario: two hexadecimal digits.
    let prefix: String

    /// A push's device token: 64 hexadecimal digits, none of them a simulator script's code (`fa…`).
    func token(_ number: Int) -> String {
        "fa" + prefix + String(format: "%060x", number)
    }

    /// The token numbers of each request for `pushes` pushes from `first`: 20 single requests, then a batch of 20.
    static func requests(pushes: Int, first: Int = 0) -> [[Int]] {
        var requests: [[Int]] = []
        var next = first
        let end = first + pushes
        while next < end {
            let size = requests.count % 21 == 20 ? min(20, end - next) : 1
            requests.append(Array(next..<(next + size)))
            next += size
        }
        return requests
    }

    /// Sends the requests evenly over `seconds` (open loop), each once, and returns what the answers said.
    ///
    /// - Parameter synchronous: No request asks `Prefer: respond-async` (otherwise every third one does).
    func send(_ requests: [[Int]], over seconds: Double, synchronous: Bool = false) async -> FaultLedger {
        let clock = ContinuousClock()
        let start = clock.now
        let interval = Duration.seconds(seconds) / max(requests.count, 1)
        return await withTaskGroup(of: FaultLedger.self) { group in
            for (index, tokens) in requests.enumerated() {
                try? await Task.sleep(until: start + interval * index, clock: clock)
                group.addTask { await self.push(tokens, respondAsync: !synchronous && index % 3 == 2) }
            }
            var ledger = FaultLedger()
            for await part in group { ledger.merge(part) }
            return ledger
        }
    }

    /// Sends one request, and records its tickets or its refusal.
    func push(_ numbers: [Int], respondAsync: Bool) async -> FaultLedger {
        var ledger = FaultLedger()
        ledger.pushes = numbers.count
        let to = numbers.map { "\"\(token($0))\"" }.joined(separator: ",")
        let body = #"{"messages":[{"to":[\#(to)],"title":"Fault run","body":"Disk full on db-3"}]}"#
        var headers = [
            HTTPHeader("authorization", "Bearer \(key)"), HTTPHeader("content-type", "application/json"),
        ]
        if respondAsync { headers.append(HTTPHeader("prefer", "respond-async")) }
        let request = HTTP2Request(
            url: url + "/v1/push", headers: headers, body: Array(body.utf8), timeout: .seconds(60))
        do {
            let response = try await pool.send(request)
            guard response.status == 200 || response.status == 202,
                case .array(let tickets)? = JSONValue.decode(response.body)?.objectValue?["data"]
            else {
                ledger.refused["status \(response.status)"] = numbers.count
                return ledger
            }
            for ticket in tickets {
                guard let id = ticket.objectValue?["id"]?.stringValue,
                    let status = ticket.objectValue?["status"]?.stringValue
                else { continue }
                ledger.tickets[id.lowercased()] = status
            }
        } catch {
            ledger.refused["no answer"] = numbers.count
        }
        return ledger
    }

    /// Looks the ledger's tickets up on `/v1/receipts` until each receipt is final, or until `timeout`: then what is
    /// still pending is ``FaultLedger/stuck``, and what the relay does not know ``FaultLedger/missing``.
    func follow(_ ledger: inout FaultLedger, timeout: Duration) async throws {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        var open = Set(ledger.tickets.keys).subtracting(ledger.receipts.keys)
        var unknown: Set<String> = []
        while !open.isEmpty {
            unknown = []
            for chunk in Array(open).sorted().chunks(of: 1000) {
                let found = try await lookUp(chunk)
                for id in chunk {
                    switch found[id] {
                    case "ok"?, "error"?:
                        ledger.receipts[id] = found[id]
                        open.remove(id)
                    case nil:
                        unknown.insert(id)
                    default:
                        break
                    }
                }
            }
            guard !open.isEmpty, clock.now < end else { break }
            // Lookups have a budget of 2 a second (bursts of 60): a round a second stays within it.
            try await Task.sleep(for: .seconds(1))
        }
        ledger.missing = unknown
        ledger.stuck = open.subtracting(unknown)
    }

    /// One lookup: the status of each receipt the relay returned, by id.
    private func lookUp(_ ids: [String]) async throws -> [String: String] {
        let body = JSONValue.object(["ids": .array(ids.map { .string($0) })]).encodedBytes()
        let request = HTTP2Request(
            url: url + "/v1/receipts",
            headers: [HTTPHeader("authorization", "Bearer \(key)"), HTTPHeader("content-type", "application/json")],
            body: body, timeout: .seconds(30))
        for _ in 0..<30 {
            let response = try await pool.send(request)
            // 503: a store that is recovering from a fault (full, or its database away) answers again shortly.
            if response.status == 429 || response.status == 503 {
                try await Task.sleep(for: .seconds(1))
                continue
            }
            guard response.status == 200,
                case .object(let data)? = JSONValue.decode(response.body)?.objectValue?["data"]
            else {
                throw ValidationError("receipts lookup answered \(response.status)")
            }
            var found: [String: String] = [:]
            for (id, receipt) in data {
                if let status = receipt.objectValue?["status"]?.stringValue { found[id.lowercased()] = status }
            }
            return found
        }
        throw ValidationError("receipts lookups kept being refused (429 or 503)")
    }
}

extension Array {
    /// The array cut into pieces of at most `size` elements, in order.
    func chunks(of size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
