import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// A resolved socket address, as bytes: `sockaddr_in` or `sockaddr_in6`.
package struct SocketAddressBytes: Sendable, Equatable {
    var family: Int32
    var bytes: [UInt8]

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        bytes.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            // `bytes` is never empty (a sockaddr_in or sockaddr_in6 copied by `resolve`), so baseAddress is non-nil.
        }
    }

    /// The numeric address of an IPv4 or IPv6 literal, without a look-up; `nil` for a name.
    static func literal(_ host: String, port: Int) -> SocketAddressBytes? {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            return SocketAddressBytes(family: AF_INET, bytes: withUnsafeBytes(of: v4) { Array($0) })
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            return SocketAddressBytes(family: AF_INET6, bytes: withUnsafeBytes(of: v6) { Array($0) })
        }
        return nil
    }

    /// Looks a name up with `getaddrinfo` (blocking: call it off the event loop).
    static func resolve(_ host: String, port: Int) -> Result<[SocketAddressBytes], HTTP2Error> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            return .failure(HTTP2Error(.connectFailed, detail: "cannot resolve \(host): \(reason)"))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddressBytes] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr,
                entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6
            {
                let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen)))
                let candidate = SocketAddressBytes(family: entry.pointee.ai_family, bytes: bytes)
                if !addresses.contains(candidate) { addresses.append(candidate) }
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(HTTP2Error(.connectFailed, detail: "\(host) has no IPv4 or IPv6 address"))
        }
        return .success(addresses)
    }
}

/// The upstream a pool connects to, read once from the first request's URL.
struct UpstreamOrigin: Sendable, Equatable {
    var scheme: String
    var host: String
    var port: Int
    /// The `:authority` of requests: `host` or `host:port`, with brackets around an IPv6 literal.
    var authority: String
    var isIPLiteral: Bool

    /// The origin of an absolute `https` URL, and its path with the query; `nil` when the URL has no usable
    /// scheme or host. Parsed on the bytes: it runs for every request.
    static func split(_ url: String) -> (origin: UpstreamOrigin, path: String)? {
        let bytes = Array(url.utf8)
        guard let schemeEnd = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes.count > schemeEnd + 2, bytes[schemeEnd + 1] == UInt8(ascii: "/"),
            bytes[schemeEnd + 2] == UInt8(ascii: "/")
        else { return nil }
        let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
        guard scheme == "https" else { return nil }
        let authorityStart = schemeEnd + 3
        let pathStart =
            bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.count
        let authority = String(decoding: bytes[authorityStart..<pathStart], as: UTF8.self)
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host = authority
        var port = 443
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let number = Int(rest.dropFirst()), (1...65535).contains(number) else { return nil }
                port = number
            } else if !rest.isEmpty {
                return nil
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else {
                return nil
            }
            port = number
        }
        guard !host.isEmpty else { return nil }
        var path = String(decoding: bytes[pathStart...], as: UTF8.self)
        if path.isEmpty { path = "/" } else if path.hasPrefix("?") { path = "/" + path }
        let origin = UpstreamOrigin(
            scheme: scheme,
            host: host.lowercased(),
            port: port,
            authority: authority.lowercased(),
            isIPLiteral: SocketAddressBytes.literal(host, port: port) != nil
        )
        return (origin, path)
    }
}

/// Answers of recent look-ups, kept for `dnsCacheTimeout` (Apple advises a fresh look-up per connection, so short).
/// Event-loop confined, like its pool.
struct DNSCache {
    private var entry: (addresses: [SocketAddressBytes], expires: ContinuousClock.Instant)?
    /// Rotates through the addresses, so that successive connections spread over them.
    private var nextIndex = 0

    mutating func address(now: ContinuousClock.Instant) -> SocketAddressBytes? {
        guard let entry, now < entry.expires, !entry.addresses.isEmpty else { return nil }
        defer { nextIndex += 1 }
        return entry.addresses[nextIndex % entry.addresses.count]
    }

    mutating func store(_ addresses: [SocketAddressBytes], until expires: ContinuousClock.Instant) {
        entry = (addresses, expires)
    }
}

/// Where look-ups run: `getaddrinfo` blocks, so never on an event loop.
enum Resolver {
    private static let queue = DispatchQueue(label: "pushrelay.http2.dns", attributes: .concurrent)

    static func resolve(
        _ host: String, port: Int, then deliver: @escaping @Sendable (Result<[SocketAddressBytes], HTTP2Error>) -> Void
    ) {
        queue.async { deliver(SocketAddressBytes.resolve(host, port: port)) }
    }
}

extension String.UTF8View {
    /// The first index after `offset` bytes whose byte satisfies `predicate`.
    func firstIndex(where predicate: (UInt8) -> Bool, after offset: Int) -> Index? {
        guard let start = index(startIndex, offsetBy: offset, limitedBy: endIndex) else { return nil }
        return self[start...].firstIndex(where: predicate)
    }
}
