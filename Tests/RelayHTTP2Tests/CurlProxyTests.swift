import Foundation
import RelaySimulator
import Synchronization
import Testing

@testable import RelayHTTP2

#if canImport(Glibc)
import Glibc
#endif

/// The libcurl backend through an HTTP CONNECT proxy, against the loopback HTTP/2-over-TLS server: the tunnel carries
/// the TLS end to end, credentials go as Basic proxy authorisation, a refused tunnel is a typed connect failure, and
/// proxy environment variables never redirect a pool that has no proxy configured.
///
/// Serialized because one test sets process-wide environment variables.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct CurlProxyTests {
    static let echo: @Sendable (HTTP2TestRequest) async -> HTTP2TestAction = { request in
        .respond(HTTP2TestResponse(status: 200, headers: [("x-request", request.header("x-request") ?? "")], body: []))
    }

    static func request(_ server: HTTP2TestServer, _ number: Int) -> HTTP2Request {
        HTTP2Request(
            url: server.baseURL + "/3/device/test",
            headers: [HTTPHeader("x-request", "\(number)"), HTTPHeader("content-type", "application/json")],
            body: Array("{\"n\":\(number)}".utf8)
        )
    }

    static func pool(_ server: HTTP2TestServer, proxy: String?) throws -> HTTP2Pool {
        try HTTP2Pool(configuration: .init(backend: .curl, proxy: proxy, caFile: server.caFilePath))
    }

    /// Sends one request and returns the error it failed with, recording an issue if it succeeded.
    static func failure(_ pool: HTTP2Pool, _ request: HTTP2Request) async -> HTTP2Error? {
        do {
            let response = try await pool.send(request)
            Issue.record("expected a failure, got status \(response.status)")
            return nil
        } catch let error as HTTP2Error {
            return error
        } catch {
            Issue.record("expected an HTTP2Error, got \(error)")
            return nil
        }
    }

    @Test func requestsTravelThroughOneTunnelToTheUpstream() async throws {
        let server = try await HTTP2TestServer.start(handler: Self.echo)
        let proxy = try TestConnectProxy()
        let pool = try Self.pool(server, proxy: proxy.url)
        for number in 1...3 {
            let response = try await pool.send(Self.request(server, number))
            #expect(response.status == 200)
            #expect(response.header("x-request") == "\(number)")
        }
        let seen = proxy.statistics
        #expect(seen.tunnels == 1, "the HTTP/2 connection inside the tunnel carried every request")
        #expect(seen.targets == ["127.0.0.1:\(server.port)"])
        #expect(seen.authorizations == [nil])
        #expect(server.statistics.connectionsAccepted == 1)
        #expect(server.statistics.streamsTotal == 3)
        await pool.shutdown()
        await proxy.stop()
        try await server.shutdown()
    }

    @Test func credentialsInTheProxyURLAreSentAsBasicAuthorization() async throws {
        let server = try await HTTP2TestServer.start(handler: Self.echo)
        let proxy = try TestConnectProxy(requiredCredentials: "relay:s3cret")
        let pool = try Self.pool(server, proxy: proxy.url(user: "relay", password: "s3cret"))
        #expect(try await pool.send(Self.request(server, 1)).status == 200)
        let seen = proxy.statistics
        #expect(seen.tunnels == 1 && seen.refused == 0)
        #expect(seen.authorizations == ["Basic " + Data("relay:s3cret".utf8).base64EncodedString()])
        #expect(server.statistics.connectionsAccepted == 1)
        await pool.shutdown()
        await proxy.stop()
        try await server.shutdown()
    }

    /// A wrong password, and none at all.
    @Test(arguments: ["wr0ng-pa55", nil] as [String?])
    func aRefusedTunnelIsATypedConnectFailure(password: String?) async throws {
        let server = try await HTTP2TestServer.start(handler: Self.echo)
        let proxy = try TestConnectProxy(requiredCredentials: "relay:s3cret")
        let pool = try Self.pool(server, proxy: password.map { proxy.url(user: "relay", password: $0) } ?? proxy.url)
        let error = await Self.failure(pool, Self.request(server, 1))
        #expect(error?.kind == .connectFailed)
        #expect(error?.isRetryable == true)
        #expect(error?.description.contains("wr0ng-pa55") == false, "an error never shows the proxy's password")
        let seen = proxy.statistics
        #expect(seen.tunnels == 0 && seen.refused == 1)
        #expect(server.statistics.connectionsAccepted == 0)
        await pool.shutdown()
        await proxy.stop()
        try await server.shutdown()
    }

    @Test func anUnreachableProxyIsATypedConnectFailure() async throws {
        let server = try await HTTP2TestServer.start(handler: Self.echo)
        let pool = try Self.pool(server, proxy: "http://127.0.0.1:\(try TestConnectProxy.closedPort())")
        let error = await Self.failure(pool, Self.request(server, 1))
        #expect(error?.kind == .connectFailed)
        #expect(server.statistics.connectionsAccepted == 0)
        await pool.shutdown()
        try await server.shutdown()
    }

    @Test func proxyEnvironmentVariablesNeverRedirectRequests() async throws {
        let server = try await HTTP2TestServer.start(handler: Self.echo)
        let dead = "http://127.0.0.1:\(try TestConnectProxy.closedPort())"
        // No proxy configured: libcurl would otherwise send through the dead proxy the environment names.
        try await Self.withEnvironment([
            "https_proxy": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "all_proxy": dead, "http_proxy": dead,
        ]) {
            let pool = try Self.pool(server, proxy: nil)
            #expect(try await pool.send(Self.request(server, 1)).status == 200)
            #expect(try await pool.send(Self.request(server, 2)).status == 200)
            await pool.shutdown()
        }
        #expect(server.statistics.connectionsAccepted == 1, "the requests went direct")
        try await server.shutdown()
    }

    @Test func aConfiguredProxyIsUsedWhateverNoProxySays() async throws {
        let server = try await HTTP2TestServer.start(handler: Self.echo)
        let proxy = try TestConnectProxy()
        try await Self.withEnvironment(["no_proxy": "*", "NO_PROXY": "*"]) {
            let pool = try Self.pool(server, proxy: proxy.url)
            #expect(try await pool.send(Self.request(server, 1)).status == 200)
            await pool.shutdown()
        }
        #expect(proxy.statistics.tunnels == 1)
        #expect(server.statistics.connectionsAccepted == 1)
        await proxy.stop()
        try await server.shutdown()
    }

    /// Runs `body` with the variables set, then restores each to its previous value or absence.
    static func withEnvironment(
        _ variables: [String: String],
        _ body: () async throws -> Void
    ) async throws {
        let saved = variables.keys.map { name in (name, getenv(name).map { String(cString: $0) }) }
        for (name, value) in variables { setenv(name, value, 1) }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        try await body()
    }
}

/// A minimal HTTP CONNECT proxy on `127.0.0.1`, private to these tests.
///
/// One thread accepts; each client gets a thread that reads the `CONNECT host:port HTTP/1.1` head, checks
/// `Proxy-Authorization` when credentials are required (407 otherwise), connects to the target (an IPv4 literal, as
/// the test server's URL has), answers `200 Connection Established` and relays bytes both ways until either side
/// closes. ``stop()`` shuts every socket down and returns once every thread has ended.
private final class TestConnectProxy: Sendable {
    struct Statistics: Sendable, Equatable {
        /// CONNECTs answered 200.
        var tunnels = 0
        /// CONNECTs answered otherwise (407, 400, 502).
        var refused = 0
        /// Every CONNECT's `host:port`, in arrival order.
        var targets: [String] = []
        /// Every CONNECT's `Proxy-Authorization` value, in arrival order.
        var authorizations: [String?] = []
    }

    struct SocketError: Error {
        let call: String
        let code: Int32
    }

    private struct State {
        var statistics = Statistics()
        /// Sockets a thread is using; ``stop()`` shuts them down so that the threads' blocking calls return.
        var sockets: Set<Int32> = []
        var threads = 0
        var stopped = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    let port: Int
    private let listener: Int32
    private let requiredAuthorization: String?
    private let state = Mutex(State())

    /// Starts listening on an ephemeral port.
    ///
    /// - Parameter requiredCredentials: `user:password` the client must send as Basic proxy authorisation.
    init(requiredCredentials: String? = nil) throws {
        (listener, port) = try Self.listen()
        requiredAuthorization = requiredCredentials.map { "Basic " + Data($0.utf8).base64EncodedString() }
        spawn { $0.acceptLoop() }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    func url(user: String, password: String) -> String { "http://\(user):\(password)@127.0.0.1:\(port)" }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// Closes the listener and every tunnel, and waits for every thread to end.
    func stop() async {
        state.withLock { state in
            state.stopped = true
            _ = shutdown(listener, Int32(SHUT_RDWR))
            for socket in state.sockets { _ = shutdown(socket, Int32(SHUT_RDWR)) }
        }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.threads == 0 { return true }
                state.waiter = waiter
                return false
            }
            if done { waiter.resume() }
        }
        close(listener)
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, then closed).
    static func closedPort() throws -> Int {
        let (socket, port) = try listen()
        close(socket)
        return port
    }

    // MARK: - Threads

    private func spawn(_ work: @escaping @Sendable (TestConnectProxy) -> Void) {
        state.withLock { $0.threads += 1 }
        let thread = Thread { [self] in
            work(self)
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.threads -= 1
                guard state.threads == 0 else { return nil }
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        thread.start()
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return  // shut down by stop()
            }
            guard register(client) else { return }
            spawn { $0.serve(client) }
        }
    }

    /// Tracks a socket for ``stop()``; false (and the socket closed) once stopping.
    private func register(_ socket: Int32) -> Bool {
        let accepted = state.withLock { state in
            guard !state.stopped else { return false }
            state.sockets.insert(socket)
            return true
        }
        if !accepted { close(socket) }
        return accepted
    }

    private func release(_ socket: Int32) {
        state.withLock { _ = $0.sockets.remove(socket) }
        close(socket)
    }

    // MARK: - One client

    private func serve(_ client: Int32) {
        defer { release(client) }
        guard let (head, leftover) = Self.readHead(client) else { return }
        let lines = head.components(separatedBy: "\r\n")
        let request = lines[0].split(separator: " ")
        guard request.count == 3, request[0] == "CONNECT" else {
            refuse(client, "400 Bad Request")
            return
        }
        let target = String(request[1])
        let authorization = lines.dropFirst().compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"),
                line[..<colon].lowercased() == "proxy-authorization"
            else { return nil }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }.first
        state.withLock {
            $0.statistics.targets.append(target)
            $0.statistics.authorizations.append(authorization)
        }
        if let requiredAuthorization, authorization != requiredAuthorization {
            refuse(client, "407 Proxy Authentication Required", headers: "Proxy-Authenticate: Basic realm=\"test\"\r\n")
            return
        }
        guard let upstream = Self.connect(to: target), register(upstream) else {
            refuse(client, "502 Bad Gateway")
            return
        }
        defer { release(upstream) }
        state.withLock { $0.statistics.tunnels += 1 }
        guard Self.send(client, Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)[...]),
            Self.send(upstream, leftover[...])
        else { return }
        Self.relay(client, upstream)
    }

    private func refuse(_ client: Int32, _ status: String, headers: String = "") {
        state.withLock { $0.statistics.refused += 1 }
        _ = Self.send(client, Array("HTTP/1.1 \(status)\r\n\(headers)Content-Length: 0\r\n\r\n".utf8)[...])
    }

    // MARK: - Sockets

    /// Reads up to the blank line that ends the request head; returns the head and whatever followed it.
    private static func readHead(_ socket: Int32) -> (String, [UInt8])? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Array("\r\n\r\n".utf8)
        while received.count < 65536 {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            received += buffer[..<count]
            if let range = received.firstRange(of: end) {
                return (
                    String(decoding: received[..<range.lowerBound], as: UTF8.self), Array(received[range.upperBound...])
                )
            }
        }
        return nil
    }

    /// Copies bytes both ways until either side closes or fails.
    private static func relay(_ first: Int32, _ second: Int32) {
        var descriptors = [
            pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            if poll(&descriptors, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in 0..<2 where descriptors[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(descriptors[index].fd, $0.baseAddress, $0.count, 0) }
                guard count > 0, send(descriptors[1 - index].fd, buffer[..<count]) else { return }
            }
        }
    }

    private static func send(_ socket: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let count = rest.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            rest = rest.dropFirst(count)
        }
        return true
    }

    /// A connected socket to `a.b.c.d:port`, or nil.
    private static func connect(to target: String) -> Int32? {
        guard let colon = target.lastIndex(of: ":"), let port = UInt16(target[target.index(after: colon)...]) else {
            return nil
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, String(target[..<colon]), &address.sin_addr) == 1 else { return nil }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        return socket
    }

    /// A listening socket on 127.0.0.1 and an ephemeral port, and that port.
    private static func listen() throws -> (Int32, Int) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw SocketError(call: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                guard bind(socket, pointer, length) == 0 else { return false }
                return getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound, Glibc.listen(socket, 64) == 0 else {
            let code = errno
            close(socket)
            throw SocketError(call: "bind/listen", code: code)
        }
        return (socket, Int(UInt16(bigEndian: address.sin_port)))
    }
}
