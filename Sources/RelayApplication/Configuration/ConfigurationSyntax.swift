internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Pure syntax checks for configuration values: listen addresses, CIDRs and URLs.
enum ConfigurationSyntax {
    /// Parses `host:port`, with an IPv6 host in brackets (`[::]:8080`).
    static func listenAddress(_ text: String) throws(ConfigurationSyntaxError) -> RelayConfiguration.Server.Address {
        let host: String
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw ConfigurationSyntaxError(
                    "expected host:port; an IPv6 address goes in brackets, as in \"[::]:8080\""
                )
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                throw ConfigurationSyntaxError("expected a port after the address, as in \"[::]:8080\"")
            }
            portText = rest.dropFirst()
            guard isIPv6(host) else {
                throw ConfigurationSyntaxError("\"\(host)\" is not an IPv6 address")
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ConfigurationSyntaxError("expected host:port, as in \"0.0.0.0:8080\", found \"\(text)\"")
            }
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            guard !host.contains(":") else {
                throw ConfigurationSyntaxError("an IPv6 address goes in brackets, as in \"[::]:8080\"")
            }
            guard !host.isEmpty else {
                throw ConfigurationSyntaxError("expected host:port with a host, as in \"0.0.0.0:8080\"")
            }
            guard isIPv4(host) || isHostName(host) else {
                throw ConfigurationSyntaxError("\"\(host)\" is neither an IP address nor a host name")
            }
        }
        guard let port = Int(portText), (1...65_535).contains(port) else {
            throw ConfigurationSyntaxError("the port must be a number from 1 to 65535, found \"\(portText)\"")
        }
        return RelayConfiguration.Server.Address(host: host, port: port)
    }

    /// Checks a network in CIDR notation (`10.0.0.0/8`, `fd00::/8`) or a single address (`192.168.1.10`).
    static func checkNetwork(_ text: String) throws(ConfigurationSyntaxError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw ConfigurationSyntaxError(
                "\"\(text)\" is not a network; expected CIDR notation such as \"10.0.0.0/8\""
            )
        }
        let address = String(parts[0])
        let bits: Int
        if isIPv4(address) {
            bits = 32
        } else if isIPv6(address) {
            bits = 128
        } else {
            throw ConfigurationSyntaxError(
                "\"\(text)\" is not a network; expected CIDR notation such as \"10.0.0.0/8\""
            )
        }
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...bits).contains(prefix), parts[1].allSatisfy(\.isASCII) else {
                throw ConfigurationSyntaxError("\"\(text)\" has a prefix length outside 0–\(bits)")
            }
        }
    }

    /// Checks an `https` URL with a host and no query, fragment or user information, and returns it without a
    /// trailing slash (the senders append their paths to it). The URL is not quoted in messages.
    static func endpoint(_ text: String) throws(ConfigurationSyntaxError) -> String {
        let failure = ConfigurationSyntaxError(
            "expected an https URL with a host, such as \"https://gateway.example.com\""
        )
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "https",
            let host = components.host, !host.isEmpty
        else { throw failure }
        guard components.user == nil, components.password == nil, components.query == nil,
            components.fragment == nil
        else {
            throw ConfigurationSyntaxError("expected an https URL without user information, query or fragment")
        }
        var endpoint = text
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        return endpoint
    }

    /// Checks an upstream proxy URL, `http://[user:password@]host:port`, and returns it. Messages never quote the URL,
    /// which may hold a password.
    static func proxy(_ text: String) throws(ConfigurationSyntaxError) -> RelayConfiguration.Upstream.Proxy {
        let expected = "expected an http://[user:password@]host:port proxy URL, such as \"http://proxy.example:3128\""
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw ConfigurationSyntaxError(expected)
        }
        guard scheme != "https" else {
            throw ConfigurationSyntaxError(
                "https proxies are not supported; use an http:// proxy (TLS to the upstream runs inside its tunnel)"
            )
        }
        guard scheme == "http" else {
            throw ConfigurationSyntaxError("\(expected); the scheme \"\(scheme)\" is not supported")
        }
        guard let rawHost = components.host, !rawHost.isEmpty else {
            throw ConfigurationSyntaxError("the proxy URL has no host; \(expected)")
        }
        // An IPv6 literal comes back with or without its brackets, depending on the Foundation.
        let bare = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        let host: String
        if isIPv6(bare) {
            host = "[\(bare)]"
        } else if isIPv4(bare) || isHostName(bare) {
            host = bare
        } else {
            throw ConfigurationSyntaxError("the proxy host \"\(bare)\" is neither an IP address nor a host name")
        }
        guard let port = components.port else {
            throw ConfigurationSyntaxError("the proxy URL has no port; \(expected)")
        }
        guard (1...65_535).contains(port) else {
            throw ConfigurationSyntaxError("the proxy port must be a number from 1 to 65535, found \(port)")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil
        else {
            throw ConfigurationSyntaxError("the proxy URL must not have a path, query or fragment; \(expected)")
        }
        let user = components.user ?? ""
        guard !user.isEmpty || components.password == nil else {
            throw ConfigurationSyntaxError("the proxy URL has a password but no user name")
        }
        return RelayConfiguration.Upstream.Proxy(url: text, host: host, port: port, hasCredentials: !user.isEmpty)
    }

    /// The host of a URL, `nil` when it has none or cannot be parsed.
    static func urlHost(_ text: String) -> String? {
        URLComponents(string: text)?.host
    }

    static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    /// Letters, digits and hyphens in dot-separated labels of at most 63 characters, not all digits.
    static func isHostName(_ text: String) -> Bool {
        guard text.count <= 253, !text.allSatisfy({ $0.isNumber || $0 == "." }) else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }
}
