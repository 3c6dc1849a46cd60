import Foundation

/// The networks of `[server] trusted_proxies`, and the client address they let the relay believe.
///
/// A request's client is the peer address of its connection, unless that peer is a trusted proxy: then the
/// `X-Forwarded-For` list is read from the right (the entry the nearest proxy added) and the first address that is
/// not itself a trusted proxy is the client. Entries a client wrote itself stand to the left of that and are never
/// believed.
package struct TrustedProxies: Sendable, Equatable {
    struct Network: Sendable, Equatable {
        var bytes: [UInt8]
        var prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefix
            for (a, b) in zip(address, bytes) where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let networks: [Network]

    /// Networks in CIDR notation or single addresses; ones that do not parse are skipped (the configuration reader
    /// has refused them already).
    package init(_ networks: [String]) {
        self.networks = networks.compactMap { text in
            let parts = text.split(separator: "/", maxSplits: 1)
            guard let first = parts.first, let bytes = Self.bytes(of: String(first)) else { return nil }
            let prefix = parts.count == 2 ? Int(parts[1]) ?? -1 : bytes.count * 8
            guard (0...bytes.count * 8).contains(prefix) else { return nil }
            return Network(bytes: bytes, prefix: prefix)
        }
    }

    package func isTrusted(_ address: String) -> Bool {
        guard let bytes = Self.bytes(of: address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client of a request whose connection comes from `peer`, given its `X-Forwarded-For` header.
    package func client(peer: String?, forwardedFor: String?) -> String? {
        guard let peer, isTrusted(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard Self.bytes(of: hop) != nil else { return peer }  // garbage: believe nothing further left
            if !isTrusted(hop) { return hop }
        }
        return hops.first ?? peer
    }

    /// An IPv4 (4 bytes) or IPv6 (16 bytes) address; an IPv4-mapped IPv6 address counts as IPv4.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return Array(bytes[12...])
            }
            return bytes
        }
        return nil
    }
}
